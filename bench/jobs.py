"""The jobs a cold build of a project runs, by the Python that runs them (JSON on stdout).

    python bench/jobs.py CARDS_DIR      (the quizgen under test on the import path)
    python bench/jobs.py --torch-dir    (where provisioned torches are: environments.root())
    python bench/jobs.py --import-path  (a folder holding this quizgen alone, for another torch's Python)

Planned by quizgen's own code, as `quizgen build --no-cache` plans them: every distinct job of the
installed torch (a value card's variants included); a card judged on another version under that
version's Python; and, for each other version of the project's matrix that is provisioned, the jobs of
the cards whose range holds it, under its environment's Python (the matrix's `work_of`). The key ""
is quizgen's own Python. A floor (floor.py) runs each of these jobs once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from quizgen.cards import loader
from quizgen.execution.cache import for_output, job_key
from quizgen.execution.protocol import Job
from quizgen.planning import plan_jobs
from quizgen.project import settings
from quizgen.torch_versions import environments, judged, matrix, versioned


def planned(cards_dir: Path) -> dict[str, list[Job]]:
    project = settings.load(cards_dir)
    decks, problems = loader.load(cards_dir, project.tolerance, project.value_answers)
    if problems:
        sys.exit(f"{cards_dir} does not load: {problems[0]}")
    judging = judged.prepare(project.torch, decks, False, None)
    plan = plan_jobs(decks, for_output(cards_dir.parent / "build", False), None, judging.torch_for)
    groups = judging.groups(plan)
    elsewhere = {key for keys in groups.values() for key in keys}
    runs: dict[str, dict[str, Job]] = {"": {k: job for k, job in plan.work.items() if k not in elsewhere}}
    for version, keys in groups.items():
        runs.setdefault(str(judging.python(version)), {}).update({k: plan.work[k] for k in keys})
    cards = [card for _, card in loader.iter_cards(decks)]
    for version in versioned.others(project.torch):
        python = environments.python_for(version)
        if python is None:
            continue
        work = matrix.work_of(matrix.run_there(cards, plan.jobs, version), plan.jobs, plan.part_jobs).values()
        runs.setdefault(str(python), {}).update({job_key(job, version): job for _, job in work})
    return {python: list(jobs.values()) for python, jobs in runs.items()}


def main() -> None:
    if sys.argv[1] == "--torch-dir":
        print(environments.root())
    elif sys.argv[1] == "--import-path":
        print(environments.import_path())
    else:
        json.dump(planned(Path(sys.argv[1])), sys.stdout)


if __name__ == "__main__":
    main()
