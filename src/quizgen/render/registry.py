"""Every output, in the order they are built: the one place that names the renderers (render/base.py is
the interface only; import this lazily so `quizgen --help` stays light)."""

from __future__ import annotations

from quizgen.render.anki import AnkiRenderer
from quizgen.render.base import Renderer
from quizgen.render.build_info import BuildInfo
from quizgen.render.cards_json import CardsJson
from quizgen.render.quiz import QuizRenderer
from quizgen.render.schema_file import SchemaFile


def renderers() -> list[Renderer]:
    """Every output, in the order they are built."""
    return [CardsJson(), SchemaFile(), BuildInfo(), AnkiRenderer(), QuizRenderer()]
