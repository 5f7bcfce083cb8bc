"""The self-hosted HTML quiz: `build/quiz/` with an index of the decks, a page per deck and the assets.

Pages are static and self-contained (the card data is embedded in each page), so the folder works
from any static host and straight from disk (file://), and never asks the network for anything: math is
MathML made at build time, and the cards' images are copied into `media/`.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePosixPath
from typing import Any

import jinja2
from jinja2.sandbox import SecurityError
from markupsafe import Markup, escape

from quizgen import __version__, kinds
from quizgen.answers import placeholders
from quizgen.cards.model import VerifiedDeck
from quizgen.render import bounded
from quizgen.render.base import Project, Rendered
from quizgen.render.markup import (
    breakable,
    link_card_ids,
    markdown,
    pygments_css,
    render_math,
    rewrite_card_links,
    rewrite_images,
)
from quizgen.render.present import card_titles, deck_description, deck_views
from quizgen.render.reuse import Reuse
from quizgen.render.stage import Stage
from quizgen.render.templating import PACKAGED, TemplateProblem, environment
from quizgen.render.view import CardView, card_key
from quizgen.torch_versions import versions

STATIC = Path(__file__).parent.parent / "static"
MEDIA = "media"  # the cards' images, under their content-hashed names
# Code scrolls sideways, so keyboard users must be able to focus it; an order puzzle's lines are tiles
# that wrap instead (the line itself takes focus), and code in a <details> waits until it is opened.
_LINKED = re.compile(r'href="#card:([^"]*)"')  # in a page's cards: the cards it links to
_CODE_BLOCK = re.compile(r'(?<!<div class="line-code">)<pre class="highlight">')
KIND_SCRIPTS = "kinds"  # assets/kinds/<kind>.js: a kind's own quiz script (kinds/<kind>/quiz.js), if any


def assets() -> dict[str, Path | None]:
    """Asset name in build/quiz/assets -> packaged source file (None: generated).

    judge.js (shared with Anki), every file under static/quiz (kept in its subfolder) and each kind's
    own (kinds/<kind>/, by the names it gives them), in the order of their names; the Pygments stylesheet.
    """
    from quizgen import kinds

    quiz = STATIC / "quiz"
    named = {p.relative_to(quiz).as_posix(): p for p in quiz.rglob("*") if p.is_file()}
    for kind in kinds.all_kinds():
        named.update(kind.quiz_assets())
    found: dict[str, Path | None] = {"judge.js": STATIC / "judge.js"}
    for name in sorted(named, key=lambda n: PurePosixPath(n).parts):
        if named[name].suffix in (".js", ".css"):
            found[name] = named[name]
    found["highlight.css"] = None
    return found


@dataclass(frozen=True)
class DeckEntry:
    """One deck, as the index lists it and its own page shows it."""

    name: str
    slug: str
    url: str  # relative to the quiz root, e.g. "decks/sample-gradients.html"
    description_html: str  # sanitized Markdown
    tags: list[str]
    cards: list[CardView]
    media: dict[str, Path] = field(default_factory=dict)  # the images its description shows
    shuffle: bool = False  # quiz mode goes through the cards in a new random order each run
    position: int | None = None  # its place in the course (the index lists decks in that order, numbered)

    @property
    def card_keys(self) -> list[str]:
        """What the page calls its cards (never their ids, which name the lessons)."""
        return [card.key for card in self.cards]

    @property
    def heading(self) -> Markup:
        """The name, able to wrap between its parts (`PyTorch::<wbr>Gradients`) rather than inside a word."""
        return Markup(breakable(str(escape(self.name))))


@dataclass(frozen=True)
class PageContext:
    """What a quiz template gets: every field is a template variable of the same name."""

    site_title: str
    generator: str  # "quizgen 0.1.0"
    root: str  # the quiz root relative to this page: "" on the index, "../" on a deck page
    assets: dict[str, str]  # asset name -> URL from this page, with a content hash against stale caches
    decks: list[DeckEntry]
    deck: DeckEntry | None  # the page's deck; None on the index
    cards: list[CardView]  # the page's cards (empty on the index)
    torch_versions: list[str]  # the torch versions this page's answers are verified on
    kind_names: dict[str, str]  # card kind -> the heading a card of that kind gets
    kind_scripts: list[str]  # asset names of the quiz scripts of the kinds on this page
    data: dict[str, Any] = field(default_factory=dict)  # embedded as JSON for quiz.js
    lms: str = ""  # the run-time a deck page in an LMS package reports to ("scorm"); "" in the quiz

    def variables(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def slugify(name: str, taken: set[str]) -> str:
    """A file-name-safe, unique slug for a deck name ("Sample::Gradients" -> "sample-gradients")."""
    base = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "deck"
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    taken.add(slug)
    return slug


def deck_entries(decks: list[VerifiedDeck]) -> list[DeckEntry]:
    taken: set[str] = set()
    entries = []
    for vd in decks:
        slug = slugify(vd.deck.name, taken)
        media: dict[str, Path] = {}
        entries.append(
            DeckEntry(
                name=vd.deck.name,
                slug=slug,
                url=f"decks/{slug}.html",
                description_html=deck_description(vd.deck, media),
                tags=vd.deck.tags,
                cards=deck_views(vd),
                media=media,
                shuffle=bool(vd.deck.shuffle),
                position=vd.deck.position,
            )
        )
    return entries


def _deck_data(entry: DeckEntry) -> dict[str, Any]:
    """Only what the page's script needs; everything shown is rendered (and escaped) by the templates."""
    return {
        "page": "deck",
        "deck": {"name": entry.name, "slug": entry.slug, "shuffle": entry.shuffle},
        "cards": [{"id": c.key, "kind": c.kind, "judge": c.judge} for c in entry.cards],
    }


def _index_data(entries: list[DeckEntry]) -> dict[str, Any]:
    return {
        "page": "index",
        "decks": [{"name": e.name, "slug": e.slug, "url": e.url, "ids": e.card_keys} for e in entries],
    }


def _write_assets(folder: Path, extra: dict[str, Path] | None = None) -> dict[str, str]:
    """Copy the assets (and `extra` ones, by name); returns name -> "assets/name?v=hash"."""
    folder.mkdir(parents=True)
    urls = {}
    for name, source in {**assets(), **(extra or {})}.items():
        target = folder / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if source is None:
            target.write_text(pygments_css(), encoding="utf-8")
        else:
            shutil.copyfile(source, target)
        digest = hashlib.sha256(target.read_bytes()).hexdigest()[:10]
        urls[name] = f"assets/{name}?v={digest}"
    return urls


def _versions(cards: list[CardView]) -> list[str]:
    return versions.ordered(v for c in cards for v in c.torch_versions)


def _write_media(folder: Path, entries: list[DeckEntry]) -> set[str]:
    """Copy every image the cards and descriptions show into media/; their names."""
    media = {name: path for e in entries for name, path in e.media.items()}
    media.update((name, path) for e in entries for card in e.cards for name, path in card.media.items())
    if media:
        folder.mkdir(parents=True)
    for name, source in sorted(media.items()):
        shutil.copyfile(source, folder / name)
    return set(media)


def _finish(text: str, root: str, media: set[str], links: Links | None = None) -> str:
    """A rendered page with its math as MathML, its images' sources relative to the page, its code
    blocks focusable and its links to cards pointing at their deck's page."""
    text = rewrite_images(text, lambda src: f"{root}{MEDIA}/{src}" if src in media else None)
    text = _CODE_BLOCK.sub('<pre class="highlight" tabindex="0">', text)  # setups' code in <details> too
    if links is not None:
        text = link_card_ids(text, links)  # an id in a code span is a link, shown by the card's title
        text = rewrite_card_links(text, lambda card, inner: _card_link(card, inner, root, links))
    return render_math(text)


Links = dict[str, tuple[str, str]]  # card id -> (its deck page's url from the quiz root, its title)


def _card_link(card: str, inner: str, root: str, links: Links) -> str:
    """A link to a card: its deck's page opened at it (`decks/deck.html#card-KEY`), titled by its prompt."""
    if card not in links:  # the loader refused a link to no card: a template's own, shown as text
        return inner
    url, title = links[card]
    shown = inner if inner.strip() else markdown(placeholders.as_markdown(f"“{title}”"), inline=True)
    href = f"{escape(root + url)}#card-{card_key(card)}"
    return f'<a class="card-ref" href="{href}" title="{escape(title)}">{shown}</a>'


def card_links(entries: list[DeckEntry], decks: list[VerifiedDeck]) -> Links:
    """Where each card of the quiz is, and its title: what links to it lead to and show."""
    titles = card_titles(decks)
    return {card.id: (entry.url, titles[card.id][1]) for entry in entries for card in entry.cards}


_HELD = '<script type="application/json" id="card-html">'  # the cards' HTML, each finished already


def _finish_page(text: str, root: str, media: set[str], links: Links | None = None) -> str:
    """`_finish` for a page, but for the cards' HTML it holds as JSON (finished card by card, and most
    of a big page: the page-wide passes over it cost a third of the quiz's rendering at 10,000 cards)."""
    start = text.find(_HELD)
    end = text.find("</script>", start) if start >= 0 else -1
    if end < 0:
        return _finish(text, root, media, links)
    return (
        _finish(text[:start], root, media, links) + text[start:end] + _finish(text[end:], root, media, links)
    )


def _render(
    env: jinja2.Environment,
    name: str,
    context: PageContext,
    target: Path,
    media: set[str],
    links: Links | None = None,
) -> None:
    try:
        finish_card = lambda html: Markup(_finish(html, context.root, media, links))  # noqa: E731
        variables = {**context.variables(), "finish_card": finish_card}  # a card held as JSON: done first
        text = _finish_page(env.get_template(name).render(variables), context.root, media, links)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateProblem(f"{exc.filename or exc.name}:{exc.lineno}: {exc.message}") from None
    except SecurityError as exc:  # a project template reaching for Python's internals, or changing data
        refused = "templates render in a sandbox that refuses this"
        raise TemplateProblem(f"{_template_line(exc)}{exc.message or exc} ({refused})") from None
    except jinja2.TemplateError as exc:
        raise TemplateProblem(f"{_template_line(exc)}{exc.message or exc}") from None
    except RecursionError as exc:  # a project's template nested (or calling itself) past Python's limit
        where = _template_line(exc) or f"{name} (or a template it extends or includes): "
        raise TemplateProblem(f"{where}nested or recursing deeper than templates can go") from None
    except (MemoryError, bounded.OutOfTime) as exc:  # a project's template, in its bounded process
        where = _template_line(exc) or f"{name} (or a template it extends or includes): "
        raise TemplateProblem(f"{where}the template went past a quiz's bounds ({bounded.SAID})") from None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def _template_line(exc: BaseException) -> str:
    """`file:line: ` of the innermost template frame of an error (Jinja puts them in the traceback)."""
    where = ""
    tb = exc.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if filename.endswith((".html", ".j2", ".jinja")):
            where = f"{filename}:{tb.tb_lineno}: "
        tb = tb.tb_next
    return where


def _kind_scripts(cards: list[CardView], urls: dict[str, str]) -> list[str]:
    present = dict.fromkeys(card.kind for card in cards)
    return [f"{KIND_SCRIPTS}/{kind}.js" for kind in present if f"{KIND_SCRIPTS}/{kind}.js" in urls]


def _page(entries: list[DeckEntry], urls: dict[str, str], deck: DeckEntry | None, title: str) -> PageContext:
    root = "" if deck is None else "../"
    cards = deck.cards if deck else [card for entry in entries for card in entry.cards]
    return PageContext(
        site_title=title,
        generator=f"quizgen {__version__}",
        root=root,
        assets={name: root + url for name, url in urls.items()},
        decks=entries,
        deck=deck,
        cards=deck.cards if deck else [],
        torch_versions=_versions(cards),
        kind_names={kind.name: kind.title for kind in kinds.all_kinds()},
        kind_scripts=_kind_scripts(deck.cards if deck else [], urls),
        data=_deck_data(deck) if deck else _index_data(entries),
    )


class QuizRenderer:
    """build/quiz/: an index, a page per deck, and the assets; the project's templates/ overrides ours."""

    name = "quiz"

    def render(self, project: Project, stage: Stage) -> Rendered:
        site = project.out_dir / "quiz"
        env = environment(project.templates_dir)
        entries = deck_entries(project.decks)
        folder = stage.folder(site)
        urls = _write_assets(folder / "assets")
        media = _write_media(folder / MEDIA, entries)
        links = card_links(entries, project.decks)
        index = _page(entries, urls, None, project.title)
        _render(env, "quiz/index.html", index, folder / "index.html", media, links)
        # A project's own quiz templates may show anything, other decks too: its pages are all made.
        reuse = Reuse(project.out_dir, project.reuse and not (project.templates_dir / "quiz").is_dir())
        try:
            for entry in entries:
                page = _page(entries, urls, entry, project.title)
                shown = repr(replace(page, decks=[], cards=[]))
                linked = [(card, links.get(card)) for card in sorted(set(_LINKED.findall(shown)))]
                key = reuse.key(_templates(), shown, repr(sorted(media)), repr(linked))
                if not reuse.copied(key, site / entry.url, folder / entry.url):
                    _render(env, "quiz/deck.html", page, folder / entry.url, media, links)
                    reuse.made(key, folder / entry.url)
        finally:
            reuse.close()
        return Rendered([site])


def lms_pages(
    project: Project,
    folder: Path,
    lms: str,
    data: Callable[[DeckEntry], dict[str, Any]],
    scripts: dict[str, Path],
) -> None:
    """Each deck's page for an LMS package (render/lms/scorm.py), in `folder` with the assets and media: no
    index, no link out of its deck, and `scripts` (asset name -> file) loaded to report to the run-time
    `lms`, which finds `data(deck)` in the page's data under "lms"."""
    env = environment(project.templates_dir)
    entries = deck_entries(project.decks)
    urls = _write_assets(folder / "assets", scripts)
    media = _write_media(folder / MEDIA, entries)
    for entry in entries:
        page = _page(entries, urls, entry, project.title)
        page = replace(page, lms=lms, data={**page.data, "lms": data(entry)})
        _render(env, "quiz/deck.html", page, folder / entry.url, media, card_links([entry], project.decks))


def _templates() -> str:
    """The packaged quiz templates, as one digest (a deck page shows only its own deck)."""
    digest = hashlib.sha256()
    for path in sorted((PACKAGED / "quiz").rglob("*")):
        if path.is_file():
            digest.update(f"\0{path.relative_to(PACKAGED)}\0".encode() + path.read_bytes())
    return digest.hexdigest()
