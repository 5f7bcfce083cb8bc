"""`quizgen torch bisect CARD`: the first torch release where a card's answer changes.

The matrix shows a card's answer on a few versions (1.13.1 and 2.13.0, say); the release that changed it
lies between two of them. Bisection runs the card on the releases in between that the package index has
for this Python (`pip index versions torch`), halving the span each time: a release already provisioned
is run first (it costs nothing), another is provisioned only when asked (`--add`), else the search stops
and names it. What it finds is recorded in the lock (its `changed` section, with the content of the job
it is true for), and the card's {{changed_in}} and {{changed_after}} name those releases from then on.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from quizgen.answers import placeholders
from quizgen.cards import schema
from quizgen.cards.model import Card, TorchAnswers
from quizgen.errors import Problem, QuizgenError, UsageError
from quizgen.project import state
from quizgen.torch_versions import environments, versions

TABLE = "changed"  # the lock's section: card id -> {"after", "in", "job"}
Record = dict[str, dict[str, str]]
Probe = Callable[[str], "bool | None"]  # a release: whether it answers as the older does (None: not run)


@dataclass
class Bisected:
    """Where the answer changed: the last release with the older answer, the first with the newer one."""

    after: str
    first: str
    ran: list[str] = field(default_factory=list)  # the releases run, in order
    needed: str = ""  # the next release to run when it is not provisioned (the search stopped short)

    def said(self, card_id: str) -> str:
        """What the search found, or (with `needed`) why it stopped short, as `torch bisect` says it."""
        if self.needed:
            return (
                f"card '{card_id}': its answer changed after torch {self.after} and by {self.first}; torch "
                f"{self.needed} runs next and is not provisioned: `quizgen torch add {self.needed}`, or run "
                "again with --add"
            )
        return (
            f"card '{card_id}': its answer changed in torch {self.first} (torch {self.after} gives the older "
            "one); recorded in quizgen.lock: commit it with the cards"
        )


def search(
    releases: list[str], after: str, first: str, older: Probe, cheap: Callable[[str], bool]
) -> Bisected:
    """Bisect the releases strictly between `after` (older answer) and `first` (the newer one): each step
    runs a release near the middle of the span left, a `cheap` one (provisioned) where there is one."""
    found = Bisected(after, first)
    while True:
        low, high = versions.key(found.after), versions.key(found.first)
        span = [r for r in releases if low < versions.key(r) < high]
        if not span:
            return found
        middle = (len(span) - 1) / 2
        ready = [n for n, r in enumerate(span) if cheap(r)]
        pick = span[min(ready, key=lambda n: abs(n - middle))] if ready else span[len(span) // 2]
        same = older(pick)
        if same is None:
            found.needed = pick
            return found
        found.ran.append(pick)
        if same:
            found.after = pick
        else:
            found.first = pick


def name(release: str) -> str:
    """A release as the text names it: `2.0.0` is torch 2.0, `2.1.2` is itself."""
    return release[: -len(".0")] if release.endswith(".0") and release.count(".") == 2 else release


def index_releases(python: Path | None = None, quick: bool = False) -> list[str]:
    """The torch releases the package index has for this Python, oldest first (pip's own listing, so its
    index and settings are the user's); an error when pip cannot tell. `quick`: no retries (a build
    asking must not wait long on a machine offline)."""
    command = [str(python or sys.executable), "-I", "-m", "pip", "index", "versions", "torch"]
    command += ["--disable-pip-version-check", *(["--retries", "0", "--timeout", "10"] if quick else [])]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, check=False, timeout=120, env=environments.pip_env()
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise QuizgenError(f"could not ask pip for torch's releases: {exc}") from None
    found = parse_index(done.stdout)
    if done.returncode != 0 or not found:
        why = environments.pip_failure((done.stderr + done.stdout).encode())
        raise QuizgenError(f"could not ask pip for torch's releases (`pip index versions torch`): {why}")
    return found


LISTING = "torch-releases.json"  # in quizgen's cache folder: the index's listing, by Python
FRESH = 24 * 3600  # seconds a listing is used for
RECHECK = 3600  # a version a listing older than this leaves out is looked up again (a new release)


def python_label() -> str:
    """The Python the listing is for, as messages name it (environments run quizgen's Python)."""
    return f"Python {sys.version_info[0]}.{sys.version_info[1]}"


_asking: list[threading.Thread] = []  # ask_early's, while it asks


def ask_early() -> None:
    """Ask the index for the listing now, in a thread, unless a fresh one is kept: a build that will check
    its matrix's releases (matrix.check, once the run is done) then finds it (pip takes ~0.5 s)."""
    if not _asking:
        _asking.append(threading.Thread(target=listed, name="quizgen-index", daemon=True))
        _asking[0].start()


def listed(version: str = "", fresh: bool = False) -> list[str] | None:
    """The releases the index has for this Python, from a listing kept a day (asked again sooner when it
    leaves out `version`: at once when `fresh`); None when the index cannot be asked and none is kept."""
    if _asking and _asking[0] is not threading.current_thread():
        _asking.pop().join()  # (asked early: its answer is kept)
    kept: dict[str, object] = {}
    with contextlib.suppress(OSError, ValueError, AttributeError):
        kept = json.loads((state.home() / LISTING).read_text(encoding="utf-8")).get(_tag(), {})
    at, releases = kept.get("at"), kept.get("releases")
    age = time.time() - at if isinstance(at, (int, float)) else FRESH
    if isinstance(releases, list) and age < FRESH and (version in releases or (age < RECHECK and not fresh)):
        return [str(r) for r in releases]
    try:
        releases = index_releases(quick=True)
    except QuizgenError:
        return [str(r) for r in releases] if isinstance(releases, list) else None
    keep(releases)
    return releases


def _tag() -> str:
    return f"{python_label()} {platform.machine()} {sys.platform}"


def keep(releases: list[str]) -> None:
    """Keep the index's listing for this Python (as asked now) for `listed`."""
    path = state.home() / LISTING
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{LISTING}.{os.getpid()}")
        listing = {_tag(): {"at": time.time(), "releases": releases}}
        temporary.write_text(json.dumps(listing), encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass  # (kept or not, the listing is right)


def release_problem(version: str, fresh: bool = False) -> str:
    """Why torch `version` cannot be provisioned here: not released, or no wheel for this Python ("" when
    the index has it, or cannot be asked: pip then says)."""
    releases = listed(version, fresh)
    if not releases or version in releases:
        return ""
    key, python = versions.key, python_label()
    if key(version) > key(releases[-1]):
        why = f"is not a torch release (the newest the package index has is {releases[-1]})"
    elif key(version) < key(releases[0]):
        why = f"has no wheel for {python} (the oldest torch the package index has for it is {releases[0]})"
    else:
        why = f"is not a torch release the package index has for {python}"
    return f"torch {version} {why}; the releases for {python}: {', '.join(releases)}"


def require_release(version: str) -> None:
    """An error saying why torch `version` cannot be provisioned here, if the index (asked again for a
    version its listing leaves out) does not have it for this Python."""
    if why := release_problem(version, fresh=True):
        raise environments.TorchError(why)


def unreleased(cards_dir: Path, missing: list[str], problems: list[Problem]) -> bool:
    """Whether a version of the matrix not provisioned (one that is exists) is one the package index does
    not have for this Python: nothing verifies it, nor ever could; each is a problem where the settings
    file lists it."""
    from quizgen.project import settings

    found = [(version, why) for version in missing if (why := release_problem(version))]
    problems += [Problem(settings.matrix_at(cards_dir, version), why) for version, why in found]
    return bool(found)


def parse_index(output: str) -> list[str]:
    """The releases in `pip index versions` output ("Available versions: 2.1.0, 2.0.1+cpu, ..."), oldest
    first, each once and without its local part."""
    for line in output.splitlines():
        if line.strip().startswith("Available versions:"):
            listed = line.partition(":")[2].split(",")
            found = {versions.release(v) for v in listed if versions.release(v)}
            return versions.ordered(v for v in found if versions.VERSION.fullmatch(v))
    return []


def check_record(entry: object, job: str, after: str, first: str) -> tuple[str, str] | None:
    """A lock record's (after, first), if it is of this job and lies within what the matrix ran: the
    matrix shows the older answer on `after` and the newer on `first`."""
    if not isinstance(entry, dict) or entry.get("job") != job:
        return None
    was, then = entry.get("after"), entry.get("in")
    if not (isinstance(was, str) and isinstance(then, str)):
        return None
    if not (versions.VERSION.fullmatch(was) and versions.VERSION.fullmatch(then)):
        return None
    key = versions.key
    if not key(after) <= key(was) < key(then) <= key(first):
        return None
    return was, then


def cited(known: TorchAnswers | None) -> dict[str, str]:
    """The values of {{changed_in}} and {{changed_after}} (none when the answers never changed): the
    releases bisection found, else the matrix's versions on either side of the change."""
    if known is not None and known.since is not None:
        return {"changed_after": name(known.since[0]), "changed_in": name(known.since[1])}
    change = known.changed() if known is not None else None
    if change is None:
        return {}
    return {"changed_after": change[0], "changed_in": change[1]}


def since(card: Card, known: TorchAnswers, entry: object) -> tuple[TorchAnswers, Problem | None]:
    """The card's answers with the releases the lock's bisection records between them (when it is of this
    job and agrees with the matrix); a card whose text cites the change without one is warned."""
    change = known.changed()
    if change is None:
        return known, None
    found = check_record(entry, known.job, *change)
    if found is not None:
        return replace(known, since=found), None
    written = [name for text in schema.text_fields(card).values() for name in placeholders.names(text)]
    if any(name in written for name in placeholders.TORCH_CHANGE):
        stale = " (quizgen.lock's is of what it ran before, or lies outside)" if entry is not None else ""
        message = (
            f"{{{{changed_in}}}} names torch {change[1]}, the next version of the matrix, not the release "
            f"that changed the answer{stale}: `quizgen torch bisect {card.id}` finds it"
        )
        return known, Problem(card.at("explain"), message)
    return known, None


def changes_record(answers: Mapping[str, TorchAnswers]) -> Record:
    """The lock's section of bisected changes, for the cards whose answers still change there."""
    return {
        card_id: {"after": known.since[0], "in": known.since[1], "job": known.job}
        for card_id, known in sorted(answers.items())
        if known.since is not None
    }


def read(lock_path: Path) -> dict[str, object]:
    """The lock's bisected changes by card id (empty when it has none or is not readable)."""
    from quizgen.project import lockfile

    try:
        data = (lockfile.load(lock_path) or {}).get(TABLE, {})
    except (OSError, ValueError, AttributeError, RecursionError):  # (a repository's lock nests at will)
        return {}
    return dict(data) if isinstance(data, dict) else {}


def not_varying(card_id: str, answer: str, on: list[str]) -> UsageError:
    return UsageError(
        f"card '{card_id}' answers `{answer}` on every torch version it ran on (torch {', '.join(on)}): "
        "there is no change to bisect"
    )
