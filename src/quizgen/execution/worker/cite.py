"""A card's named expressions (`cite:`), evaluated after its snippet so its prose can quote them."""

from __future__ import annotations

from quizgen.execution.protocol import Answer, SnippetJob
from quizgen.execution.worker import describe
from quizgen.execution.worker.snippets import SnippetFailed, format_exception


def evaluate(cites: dict[str, SnippetJob], ns: dict[str, object], paths: set[str]) -> dict[str, Answer]:
    """Each named expression's value in the snippet's namespace; one that raises fails the card."""
    values: dict[str, Answer] = {}
    for name, snippet in cites.items():
        try:
            values[name] = describe.describe(*describe.evaluate(snippet, ns))
        except SnippetFailed:
            raise
        except Exception as exc:
            raise SnippetFailed(f"cite '{name}' raised:\n{format_exception(exc, paths)}") from None
    return values
