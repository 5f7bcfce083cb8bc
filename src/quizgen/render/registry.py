"""Every output, in the order they are built: the one place that names the renderers (render/base.py is
the interface only; import this lazily so `quizgen --help` stays light)."""

from __future__ import annotations

from quizgen.project.settings import Exports
from quizgen.render.anki import AnkiRenderer
from quizgen.render.base import Renderer
from quizgen.render.build_info import BuildInfo
from quizgen.render.cards_json import CardsJson
from quizgen.render.lms.moodle import MoodleBank
from quizgen.render.lms.qti import QtiBank
from quizgen.render.lms.scorm import ScormPackages
from quizgen.render.quiz import QuizRenderer
from quizgen.render.schema_file import SchemaFile


def renderers(exports: Exports | None = None) -> list[Renderer]:
    """Every output, in the order they are built: the outputs for an LMS where quizgen.toml asks."""
    chosen: list[Renderer] = [CardsJson(), SchemaFile(), BuildInfo(), AnkiRenderer(), QuizRenderer()]
    if exports is not None:
        chosen += [ScormPackages()] if exports.scorm else []
        chosen += [QtiBank()] if exports.qti else []
        chosen += [MoodleBank()] if exports.moodle else []
    return chosen
