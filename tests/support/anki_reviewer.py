"""Anki's reviewer emulated in Chromium on the HTML the real Anki backend renders: desktop swaps the card
HTML inside one page, AnkiDroid and AnkiMobile load a new page. A test module takes the fixtures with
`context, page = anki_reviewer.context, anki_reviewer.page` and defines `rendered` (render_sides)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from quizgen import pipeline
from tests.support.anki import card_id as card_id_of
from tests.support.anki import collection, import_all

ORIGIN = "http://anki.test"

# What Anki desktop's reviewer does to show a side (ts/reviewer: setInnerHTML): replace the HTML of #qa,
# then run its scripts one by one, waiting for each external one to load.
REVIEWER = """<!doctype html><html><head><meta charset="utf-8"></head>
<body class="card card1 %s"><div id="qa"></div><script>
async function showSide(html) {
  const qa = document.getElementById("qa");
  qa.innerHTML = html;
  for (const old of Array.from(qa.getElementsByTagName("script"))) {
    await new Promise((resolve) => {
      const script = document.createElement("script");
      for (const attr of old.attributes) script.setAttribute(attr.name, attr.value);
      script.text = old.text;
      if (old.src) { script.onload = resolve; script.onerror = resolve; }
      old.replaceWith(script);
      if (!old.src) resolve();
    });
  }
}
</script></body></html>"""


PAGE = '<!doctype html><html><head><meta charset="utf-8"></head><body class="card card1 %s">%s</body></html>'


def render_sides(report: pipeline.Report, folder: Path, search: str) -> dict[str, Any]:
    """The cards a search finds in a collection (in `folder`) the report's packages were imported into."""
    with collection(folder) as col:
        import_all(col, report)
        sides = {}
        for cid in col.find_cards(search):
            card = col.get_card(cid)
            sides[card_id_of(report, card.note())] = (card.question(), card.answer())
        media = Path(col.media.dir())
    return {"sides": sides, "media": media}


@pytest.fixture(scope="module")
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    yield context
    context.close()


@pytest.fixture
def page(context: Any, rendered: dict[str, Any]) -> Iterator[Any]:
    """A fresh tab where http://anki.test serves the collection's media folder and our pages."""
    page = context.new_page()
    pages: dict[str, str] = {}
    outside: list[str] = []
    errors: list[str] = []

    def serve(route: Any) -> None:
        url = route.request.url
        if not url.startswith(ORIGIN + "/"):
            outside.append(url)
            route.abort()
            return
        name = url[len(ORIGIN) + 1 :]
        if name in pages:
            route.fulfill(status=200, content_type="text/html", body=pages[name])
        elif (rendered["media"] / name).is_file():
            route.fulfill(
                status=200, content_type="text/javascript", body=(rendered["media"] / name).read_bytes()
            )
        else:  # nothing else may be fetched: an <img src=x> from card text would land here
            outside.append(url)
            route.fulfill(status=404, body="")

    page.route("**/*", serve)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.pages = pages  # type: ignore[attr-defined]
    yield page
    page.close()
    assert not outside, f"requests outside the card: {outside}"
    assert not errors, f"JavaScript errors: {errors}"


def desktop(page: Any, sides: tuple[str, str], act: Any, night: bool = False) -> Any:
    """Show the front in one reviewer page, let `act` answer, then show the back in the same page."""
    page.pages["reviewer.html"] = REVIEWER % ("nightMode night_mode" if night else "")
    page.goto(f"{ORIGIN}/reviewer.html")
    page.evaluate("html => showSide(html)", sides[0])
    act(page)
    page.evaluate("html => showSide(html)", sides[1])
    return page.locator(".qg-result")


def mobile(page: Any, sides: tuple[str, str], act: Any) -> Any:
    """Load the front as a page, let `act` answer, then load the back as a new page."""
    page.pages["front.html"] = PAGE % ("", sides[0])
    page.pages["back.html"] = PAGE % ("", sides[1])
    page.goto(f"{ORIGIN}/front.html")
    act(page)
    page.goto(f"{ORIGIN}/back.html")
    page.wait_for_selector(".qg-result[data-ok]")
    return page.locator(".qg-result")
