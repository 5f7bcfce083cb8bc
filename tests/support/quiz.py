"""Helpers for the HTML quiz tests: one shared build of the sample deck plus a hostile deck, pages opened
in Chromium with every request recorded, the order-puzzle keyboard moves, and axe-core."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from quizgen import pipeline
from quizgen.execution.pool import Pool
from quizgen.render.view import card_key
from tests.support.projects import SAMPLE_DECK, write_project
from tests.support.tools import npm_file

HOSTILE_DECK = """\
deck: "Hostile <script>window.__pwned = 'deck'</script>"
description: "<img src=x onerror=\\"window.__pwned = 'description'\\"> [a](javascript:window.__pwned=1)"
setup: |
  import torch
cards:
  - id: hostile-value
    kind: value
    ask: "<script>window.__pwned = 'ask'</script> What is `s`? [click](javascript:window.__pwned='ask-link')"
    code: |
      s = "</script><script>window.__pwned = 'answer'</script>"
    answer_expr: s
    answer: "</script><script>window.__pwned = 'answer'</script>"
    explain: "<img src=x onerror=\\"window.__pwned = 'explain'\\"> <a href=\\"javascript:alert(1)\\">a</a>"
  - id: hostile-myth
    kind: myth
    claim: "<svg onload=\\"window.__pwned = 'claim'\\"></svg> printing HTML runs it"
    verdict: false
    proof: |
      out = "<img src=x onerror=\\"window.__pwned = 'output'\\">"
      print(out)
      assert out.startswith("<img")
    holds: out.startswith("<script")
  - id: hostile-order
    kind: order
    ask: "Order these <b onmouseover=\\"window.__pwned = 'order'\\">lines</b>."
    setup: |
      xs = []
    lines:
      - xs.append("<img src=x onerror=\\"window.__pwned = 'line'\\">")
      - xs.append("</script>")
    distractors:
      - xs.append("<script>window.__pwned = 'distractor'</script>")
    check: |
      assert xs == ["<img src=x onerror=\\"window.__pwned = 'line'\\">", "</script>"]
  - id: hostile-basic
    kind: basic
    front: "<iframe src=\\"javascript:window.__pwned = 'front'\\"></iframe>"
    back: "<style>body { display: none }</style>[x](javascript:window.__pwned='back')"
    code: |
      print("<script>window.__pwned = 'basic-output'</script>")
"""

# A remote image in card Markdown: the quiz's Content-Security-Policy must keep it from loading.
REMOTE_IMAGE = "https://example.com/t.png"
QUIZ_HOSTILE_DECK = HOSTILE_DECK.replace(
    "[x](javascript:window.__pwned='back')", f"[x](javascript:window.__pwned='back') ![]({REMOTE_IMAGE})"
)

SAMPLE_PAGE = "decks/sample-gradients.html"
HOSTILE_PAGE = "decks/hostile-script-window-pwned-deck-script.html"
SAMPLE_IDS = [
    "value-two-steps",
    "value-grad-none",
    "value-shape",
    "value-raises",
    "myth-zero-grad-zeros",
    "order-train-step",
    "basic-why-accumulate",
]
AXE_VERSION = "4"

_built: dict[str, pipeline.Report] = {}


def quiz_build(tmp_path_factory: pytest.TempPathFactory, pool: Pool) -> pipeline.Report:
    """The sample and hostile decks built once per session (`report.root` is the project folder)."""
    if "report" not in _built:
        files = {"sample.yaml": SAMPLE_DECK, "hostile.yaml": QUIZ_HOSTILE_DECK}
        root = write_project(tmp_path_factory.mktemp("quiz"), files)
        options = pipeline.Options(cards_dir=root / "cards", out_dir=root / "build", pool=pool)
        report = pipeline.build(options)
        report.root = root  # type: ignore[attr-defined]
        _built["report"] = report
    return _built["report"]


@dataclass
class Tab:
    """A page in its own browser context, with every request it made."""

    page: Any
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # stopped by the page's Content-Security-Policy

    def outside(self, allowed: tuple[str, ...] = ("file://",)) -> list[str]:
        """Requests that left for anywhere but the allowed origins (blob: and data: never leave the page)."""
        return [
            u
            for u in self.requests
            if not u.startswith((*allowed, "blob:", "data:")) and u not in self.refused
        ]


def open_tab(browser: Any, url: str, width: int = 1000, dark: bool = False, **context: Any) -> Tab:
    ctx = browser.new_context(
        viewport={"width": width, "height": 900},
        color_scheme="dark" if dark else "light",
        accept_downloads=True,
        **context,
    )
    tab = Tab(ctx.new_page())
    tab.page.on("request", lambda r: tab.requests.append(r.url))
    tab.page.on("requestfailed", lambda r: r.failure == "csp" and tab.refused.append(r.url))
    tab.page.on("pageerror", lambda e: tab.errors.append(str(e)))

    def dismiss(dialog: Any) -> None:
        tab.dialogs.append(dialog.message)
        dialog.dismiss()

    tab.page.on("dialog", dismiss)
    if url:
        tab.page.goto(url)
    return tab


def close_tab(tab: Tab) -> None:
    tab.page.context.close()


def site_url(report: pipeline.Report, page: str = "index.html") -> str:
    return (report.root / "build" / "quiz" / page).as_uri()  # type: ignore[attr-defined]


# -- order puzzles by keyboard -------------------------------------------------------------------

# A line's code as written: highlighted code ends with a newline.
LINE_TEXT = "(e) => e.textContent.replace(/\\n$/, '')"


def focused_line(page: Any) -> str | None:
    """The code of the order line that has focus (None when focus is elsewhere)."""
    result: str | None = page.evaluate(
        "() => { const a = document.activeElement;"
        f" return a && a.classList.contains('line') ? ({LINE_TEXT})(a.querySelector('.line-code')) : null; }}"
    )
    return result


def line_sequence(page: Any, card: str) -> list[str]:
    """Codes of a puzzle's lines as the arrow keys walk them: your block first, then the unused lines."""
    codes: list[str] = page.eval_on_selector_all(
        f"#card-{card_key(card)} .block .line-code, #card-{card_key(card)} .pool .line-code",
        f"els => els.map({LINE_TEXT})",
    )
    return codes


def arrow_to(page: Any, card: str, code: str) -> None:
    """Move keyboard focus to the line `code` with the arrow keys only."""
    for _ in range(20):
        here = focused_line(page)
        if here == code:
            return
        sequence = line_sequence(page, card)
        assert here is not None, "focus is not on a line"
        page.keyboard.press("ArrowDown" if sequence.index(code) > sequence.index(here) else "ArrowUp")
    raise AssertionError(f"could not reach {code!r}")


def block_codes(page: Any, card: str) -> list[str]:
    codes: list[str] = page.eval_on_selector_all(
        f"#card-{card_key(card)} .block .line-code", f"els => els.map({LINE_TEXT})"
    )
    return codes


# -- accessibility and layout --------------------------------------------------------------------


def axe_source() -> str:
    """axe-core from npm, installed once into a cache folder (it is a test tool, never shipped)."""
    return npm_file("axe-core", AXE_VERSION, "axe.min.js").read_text(encoding="utf-8")


def axe_violations(page: Any, axe: str) -> list[str]:
    """axe-core's violations on the page as it is now, one line each."""
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        # Evaluated through DevTools, not as a <script>: the page's CSP rightly refuses inline scripts.
        page.evaluate(f"(() => {{ {axe}\n}}).call(window)")
    result = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']]}"
        for v in result["violations"]
    ]


def overflowing(page: Any) -> list[str]:
    """Elements that stick out of the viewport sideways, and the page's own sideways scroll."""
    found: list[str] = page.evaluate(
        """() => {
          const out = [], root = document.documentElement, width = root.clientWidth;
          if (root.scrollWidth > width) out.push(`page scrollWidth ${root.scrollWidth} > ${width}`);
          // What a block that scrolls sideways (code) holds is inside the screen, whatever its own box.
          const scrolled = (e) => {
            for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
              if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return true;
            return false;
          };
          for (const el of document.body.querySelectorAll('*')) {
            if (el.closest('.visually-hidden, [hidden]') || scrolled(el)) continue;
            const box = el.getBoundingClientRect();
            if (box.width && (box.right > width + 0.5 || box.left < -0.5))
              out.push(`${el.tagName.toLowerCase()}.${el.className} spans ${box.left}..${box.right}`);
          }
          return out;
        }"""
    )
    return found


def cards_held(html: str) -> dict[str, str]:
    """The cards' HTML a deck page holds as JSON strings until each is shown (card id -> HTML)."""
    match = re.search(r'<script type="application/json" id="card-html">(.*?)</script>', html, re.S)
    return dict(json.loads(match.group(1))) if match else {}


def as_shown(html: str) -> str:
    """The page with its cards' HTML as the browser will have it once each is shown."""
    match = re.search(r'<script type="application/json" id="card-html">(.*?)</script>', html, re.S)
    return html.replace(match.group(0), "".join(cards_held(html).values())) if match else html
