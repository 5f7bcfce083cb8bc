"""`quizgen torch bisect CARD`: the project checked, then the card run on the releases the search picks
(torch_versions/changed.py), provisioned only when asked; what it finds is recorded in quizgen.lock."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from quizgen.errors import QuizgenError
from quizgen.torch_versions import environments
from quizgen.torch_versions import installed as installed_torch
from quizgen.torch_versions.changed import Bisected, index_releases, not_varying, search


def bisect(options: Any, card_id: str, add: bool, say: Callable[[str], None]) -> Bisected:
    """Check the project, then bisect the releases between the matrix's versions where card `card_id`'s
    answer changes (provisioning those not provisioned only when `add`); what it finds is recorded in
    the lock, which the next build reads."""
    from quizgen import kinds, pipeline
    from quizgen.execution.cache import for_output
    from quizgen.project import lock
    from quizgen.render.stage import build_lock
    from quizgen.report.show import found_card
    from quizgen.torch_versions import versioned

    report = pipeline.check(options)
    deck, vc = found_card(report, card_id)
    card, known, primary = vc.card, vc.torch, vc.outcome
    change = known.changed() if known is not None else None
    if known is None or change is None or primary is None:
        answers = known.answers if known is not None else {installed_torch.release(): ""}
        raise not_varying(card_id, next(iter(answers.values())), list(answers))
    kind = kinds.get(card.kind)
    older, job = known.answers[change[0]], kind.job(deck, card)
    assert job is not None  # (a card with answers on the matrix runs)
    releases = index_releases()
    cache = for_output(options.out_dir, options.use_cache)

    def probe(release: str) -> bool | None:
        python = environments.python_for(release)
        if python is None and not add:
            return None
        if python is None:
            say(f"torch {release}: provisioning it ({environments.DOWNLOAD})")
            python = environments.provision(release, environments.progress_to(say)).python
        ran = versioned.run_on(
            options, release, python, {card.id: (card, job)}, cache, report.settings.timeout
        )
        key, outcome = ran[card.id]
        if not outcome.ok:
            raise QuizgenError(f"{card.location}: fails on torch {release}: {outcome.error or 'no answer'}")
        answer = kind.torch_answer(card, outcome)
        same = answer == older and not kind.torch_agrees(card, answer, primary)
        say(f"torch {release}: `{answer}` ({'the older' if same else 'the newer'} answer)")
        if not outcome.cached:
            cache.put(key, outcome)
        return same

    try:
        found = search(releases, *change, probe, lambda r: environments.python_for(r) is not None)
    finally:
        cache.close()
    if not found.needed:
        path = options.cards_dir / lock.LOCK_NAME
        with build_lock(options.out_dir, options.waiting):  # (not while a build writes the lock)
            record = lock.read(path)
            record.changed[card_id] = {"after": found.after, "in": found.first, "job": known.job}
            temporary = path.with_name(f".{path.name}.{os.getpid()}")
            temporary.write_text(lock.dumps(record), encoding="utf-8")
            os.replace(temporary, path)
    return found
