"""`build/quizgen.schema.json`: the card format's JSON Schema, for `# yaml-language-server: $schema=`."""

from __future__ import annotations

import json

from quizgen.cards.schema import json_schema
from quizgen.render.base import Project, Rendered
from quizgen.render.stage import Stage


class SchemaFile:
    name = "schema"

    def render(self, project: Project, stage: Stage) -> Rendered:
        path = project.out_dir / "quizgen.schema.json"
        stage.file(path).write_text(json.dumps(json_schema(), indent=2) + "\n", encoding="utf-8")
        return Rendered([path])
