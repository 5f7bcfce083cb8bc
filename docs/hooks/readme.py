"""mkdocs hook: the site's home page is the repository's README.md, its links into docs/ made site links.

One text for both: GitHub and PyPI show README.md at the top of the repository, the site shows it as
docs/index.md, whose own text only says so."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

README = Path(__file__).resolve().parents[2] / "README.md"
# A link from the README into docs/ ("](docs/cards.md#card-format)"): on the site the page is beside it.
INTO_DOCS = re.compile(r"\]\(docs/")


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    """The README's text in place of docs/index.md's, every other page as it is."""
    if page.file.src_uri != "index.md":
        return markdown
    return INTO_DOCS.sub("](", README.read_text(encoding="utf-8"))
