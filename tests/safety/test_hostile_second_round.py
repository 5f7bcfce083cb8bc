"""The second red team's findings against the pool (issue 28): the user's terminal, one card answering
for another (and the cache keeping the forgery), the project bound into the sandbox, the session
keyring. Each builds a hostile repository in a temporary folder with a fake $HOME and checks the
effect: what reached the terminal, what the outputs and the cache hold."""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import select
import sys
import termios
import time
import tty
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import quizgen
from quizgen.cli import cli
from tests.support.hostile import basic, deck, outputs
from tests.support.projects import write_project

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only")

SECRET = "s3cret-2nd-round-token"

x86_64_only = pytest.mark.skipif(
    os.uname().machine != "x86_64", reason="the system call numbers are x86_64's"
)


def value(card_id: str, code: str, expr: str) -> str:
    body = "\n".join("      " + line for line in code.strip("\n").splitlines())
    return f"  - id: {card_id}\n    kind: value\n    ask: q\n    code: |\n{body}\n    answer_expr: {expr}\n"


# -- finding 1: the user's terminal -----------------------------------------------------------------

TERMINAL = """
import fcntl, termios
try:
    tty = os.open("/dev/tty", os.O_RDWR)
except OSError as exc:
    print("no tty:", type(exc).__name__)
else:
    for byte in b"touch {marker}\\n":
        try:
            fcntl.ioctl(tty, termios.TIOCSTI, bytes([byte]))
        except OSError as exc:
            print("TIOCSTI:", type(exc).__name__)
            break
    os.write(tty, b"\\x1b]52;c;{marker_b64}\\x07\\x1b]0;{marker}\\x07")
for fd in range(0, 64):  # any descriptor that is a terminal
    try:
        if os.isatty(fd):
            fcntl.ioctl(fd, termios.TIOCSTI, b"x")
            print("a terminal at", fd)
    except OSError as exc:
        print("fd", fd, type(exc).__name__)
"""


def _environment() -> dict[str, str]:
    """This environment, with the quizgen under test first on the import path (the build runs in the
    project, where a relative PYTHONPATH would name nothing)."""
    src = str(Path(quizgen.__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}


def _run_on_a_terminal(root: Path, env: dict[str, str], *args: str) -> tuple[bytes, bytes, int]:
    """Run `quizgen build` with a new pseudo-terminal as its controlling terminal, as a user's shell
    would; return what it wrote to the terminal, what waits in the terminal's input after it exited
    (what the shell would read next), and its exit status."""
    master, slave = os.openpty()
    tty.setraw(slave)  # no echo: a byte pushed into the input stays there, for the test to find
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child execs at once
        try:
            os.setsid()
            fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
            for fd in (0, 1, 2):
                os.dup2(slave, fd)
            os.chdir(root)
            argv = [sys.executable, "-P", "-m", "quizgen", "build", "-j", "1", "--no-cache", *args]
            os.execve(sys.executable, argv, env)
        finally:
            os._exit(127)
    written = bytearray()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready = select.select([master], [], [], 0.2)[0]
        if ready:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # EIO: every process holding the slave side is gone
                chunk = b""
            written += chunk
        done, status = os.waitpid(pid, os.WNOHANG)
        if done and not ready:
            break
    os.set_blocking(slave, False)
    pushed = b""
    with contextlib.suppress(BlockingIOError):
        pushed = os.read(slave, 1 << 16)
    os.close(master)
    os.close(slave)
    return bytes(written), pushed, os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_snippet_cannot_reach_the_users_terminal(tmp_path: Path, home: Path, sandbox: str) -> None:
    """Not even with --sandbox=off: the pool is always a session of its own, without a terminal."""
    marker = f"/tmp/qz-pwned-{uuid.uuid4().hex[:8]}"
    code = TERMINAL.replace("{marker}", marker).replace("{marker_b64}", "cXVpemdlbg==")
    root = write_project(tmp_path / "project", deck(basic("terminal", code)))
    written, pushed, status = _run_on_a_terminal(root, _environment(), "--sandbox", sandbox)
    assert status == 0, written.decode(errors="replace")
    assert marker.encode() not in pushed and pushed == b""  # nothing for the shell to run
    assert b"\x1b]52" not in written and b"\x1b]0;" not in written  # no clipboard, no title
    assert marker.encode() not in written
    shown = _card(root, "terminal")["outcome"]["output"]
    assert "no tty: OSError" in shown  # no controlling terminal in the sandbox
    assert "a terminal at" not in shown
    assert not Path(marker).exists()


# -- finding 2: no card speaks for another, and the cache keeps no forgery ---------------------------

FORGER = """
import fcntl, json, select, stat
forged = (json.dumps({"ok": True, "output": "", "value": {"type": "float", "value": 99.0, "display": "99.0"}})
          + "\\n").encode()
readers, writers = [], []
for fd in range(3, 256):
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            continue
    except OSError:
        continue
    (writers if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY else readers).append(fd)
for fd in writers:  # "this job is done": the pool may hand this process the next card's job
    os.write(fd, forged)
for _ in range(3):
    for fd in select.select(readers, [], [], 2)[0]:
        os.read(fd, 1 << 20)  # the next card's job: answer it
        for w in writers:
            os.write(w, forged)
print("forger ran with", len(readers), "readers and", len(writers), "writers")
"""

HONEST = value("b-honest", "w = torch.tensor(1.0, requires_grad=True)\n(2 * w).backward()", "w.grad.item()")


def _uncached(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    """`quizgen *args --no-cache` run in the project."""
    monkeypatch.chdir(root)
    return CliRunner().invoke(cli, [*args, "--no-cache"])


def _build(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["build", "-j", "1"])
    assert result.exit_code == 0, result.output
    return result.output


def _card(root: Path, card_id: str) -> dict[str, Any]:
    for deck_ in json.loads((root / "build" / "cards.json").read_text())["decks"]:
        for card in deck_["cards"]:
            if card["id"] == card_id:
                return dict(card)
    raise AssertionError(f"{card_id} not built")


def _answer(root: Path, card_id: str) -> str:
    return str(_card(root, card_id)["outcome"]["value"]["display"])


def test_a_card_cannot_answer_for_the_next_card_nor_poison_the_cache(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    setup = "deck: Hostile\nsetup: |\n  import os, torch\ncards:\n"
    root = write_project(tmp_path / "project", {"hostile.yaml": setup + basic("a-forger", FORGER) + HONEST})
    _build(root, monkeypatch)
    assert _answer(root, "b-honest") == "2.0"
    assert _card(root, "a-forger")["outcome"]["value"]["display"] == "99.0"  # it speaks for itself alone
    # The pull request's card is gone; the same cache answers the main branch's build.
    (root / "cards" / "hostile.yaml").write_text(setup + HONEST)
    _build(root, monkeypatch)
    assert _answer(root, "b-honest") == "2.0"


PROC_FORGER = """
import json
forged = json.dumps({"ok": True, "output": "", "value": {"type": "float", "value": 99.0, "display": "99.0"}})
reply = json.dumps({"id": "x", "result": json.loads(forged)})
done = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    if int(pid) == os.getpid():
        continue
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):  # another process's pipes, reopened through /proc
            try:
                with open(f"/proc/{pid}/fd/{fd}", "w") as f:
                    f.write(forged + "\\n" + reply + "\\n")
                done.append(f"{pid}/{fd}")
            except OSError:
                pass
    except OSError:
        pass
    try:
        open(f"/proc/{pid}/mem", "r+b").close()
        done.append(f"mem {pid}")
    except OSError:
        pass
print("reached", done)
"""


def test_no_card_reaches_another_process_of_the_pool_through_proc(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The pool's processes are not dumpable: /proc/<pid>/fd and /proc/<pid>/mem of the zygote, a worker
    or another job are closed to a snippet (it could write replies for other cards' jobs there)."""
    setup = "deck: Hostile\nsetup: |\n  import os, torch\ncards:\n"
    root = write_project(
        tmp_path / "project", {"hostile.yaml": setup + basic("a-forger", PROC_FORGER) + HONEST}
    )
    _build(root, monkeypatch)
    assert _answer(root, "b-honest") == "2.0"
    assert _card(root, "a-forger")["outcome"]["output"] == "reached []\n"


RACER = """
import glob, time
end, hits = time.time() + 8, 0
while time.time() < end:
    for path in glob.glob("/tmp/*/*/work/weights.pt") + glob.glob("/tmp/*/*/*/weights.pt"):
        try:
            torch.save(torch.tensor([99.0]), path + ".x")
            os.replace(path + ".x", path)
            hits += 1
        except (OSError, RuntimeError):  # torch.save's refusal is a RuntimeError
            pass
    time.sleep(0.01)
print("replaced", hits)
"""

RACED = value(
    "b-raced",
    "import time\ntorch.save(torch.tensor([2.0]), 'weights.pt')\ntime.sleep(3)\nw = torch.load('weights.pt')",
    "w.item()",
)


def test_a_card_running_beside_another_cannot_rewrite_its_files(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two jobs at once (-j 2) share the sandbox's /tmp: the racer looks for the other job's file and
    replaces it while that job sleeps. Each job writes only beneath its own folder (Landlock)."""
    setup = "deck: Race\nsetup: |\n  import os, torch\ncards:\n"
    root = write_project(tmp_path / "project", {"race.yaml": setup + basic("a-racer", RACER) + RACED})
    result = _uncached(root, monkeypatch, "build", "-j", "2")
    assert result.exit_code == 0, result.output
    assert _answer(root, "b-raced") == "2.0"
    assert _card(root, "a-racer")["outcome"]["output"] == "replaced 0\n"


def test_a_snippet_writing_into_its_own_result_pipe_fails_only_its_own_card(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = """
    import stat
    for fd in range(3, 64):
        try:
            if stat.S_ISFIFO(os.fstat(fd).st_mode):
                os.write(fd, b"not a result\\n")
        except OSError:
            pass
    """
    setup = "deck: Hostile\nsetup: |\n  import os, torch\ncards:\n"
    root = write_project(tmp_path / "project", {"hostile.yaml": setup + basic("garbler", code) + HONEST})
    result = _uncached(root, monkeypatch, "check", "-j", "1")
    assert result.exit_code == 1
    assert "card 'garbler' -> code: the snippet wrote into its job's result pipe (not JSON" in result.output
    assert "b-honest" not in result.output and "quizgen bug" not in result.output


AMPLIFIER = """
import fcntl, json, stat
answer = {"type": "repr", "value": [[]] * 190_000, "display": "x"}
record = (json.dumps({"ok": True, "output": "", "value": answer}) + "\\n").encode()
for fd in range(3, 64):
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode) and fcntl.fcntl(fd, fcntl.F_GETFL) & 3 == 1:
            os.write(fd, record)
    except OSError:
        pass
os._exit(0)
"""


def test_records_of_many_cards_cannot_add_up_past_quizgens_budget(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each record is within the bounds of one (190,000 values, 570 KB), 24 of them are more values than
    quizgen keeps for a build: an error, before any of them is published (the red team's quizgen held
    1.8 GB for 24 such cards of 15 MiB)."""
    setup = "deck: Many\nsetup: |\n  import os\ncards:\n"
    cards = "".join(basic(f"amp-{n}", AMPLIFIER + f"# card {n}\n") for n in range(24))  # 24 jobs, not one
    root = write_project(tmp_path / "project", {"many.yaml": setup + cards})
    result = _uncached(root, monkeypatch, "build", "-j", "2")
    assert result.exit_code == 1, result.output
    assert result.output == (
        "Error: the snippets' results hold more than 4,000,000 values in all (a card's snippet may be "
        "sending made-up answers): nothing was written\n"
    )
    assert not (root / "build" / "cards.json").exists()


def test_a_record_outside_the_protocol_is_its_cards_own_error(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A list where an answer goes crashed quizgen (AttributeError in planning); an unknown field of
    15 MiB of empty lists was kept, parsed twice and written into cards.json."""
    code = AMPLIFIER.replace('"value": answer', '"value": [1, 2], "junk": [[]] * 10')
    setup = "deck: Shape\nsetup: |\n  import os\ncards:\n"
    root = write_project(tmp_path / "project", {"shape.yaml": setup + basic("shape", code)})
    result = _uncached(root, monkeypatch, "check", "-j", "1")
    assert result.exit_code == 1, result.output
    assert (
        "card 'shape' -> code: the snippet wrote into its job's result pipe (result: no field 'junk' in the "
        "protocol)" in result.output
    ), result.output
    assert "quizgen bug" not in result.output and "Traceback" not in result.output


# -- finding 4: the project is never bound into the sandbox ------------------------------------------


def test_cards_linked_to_the_project_root_show_no_file_of_the_repository(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text(f"[http]\n\textraheader = AUTHORIZATION: basic {SECRET}\n")
    code = f"""
    points = [line.split()[4] for line in open("/proc/self/mountinfo")]
    for folder in [*points, "{root}", "{root}/cards"]:
        for name in (".git/config", "cards/.git/config"):
            try:
                print(open(os.path.join(folder, name)).read())
            except OSError:
                pass
    print("looked in", len(points), "mounts")
    """
    (root / "hostile.yaml").write_text(deck(basic("dot-git", code))["hostile.yaml"])
    (root / "cards").symlink_to(".")
    result = _uncached(root, monkeypatch, "build", "-j", "1")
    assert result.exit_code == 0, result.output
    built = outputs(root)
    assert "looked in" in built
    assert SECRET not in built


# -- finding 5: the session keyring ----------------------------------------------------------------

_ADD_KEY, _KEYCTL = 248, 250  # x86_64
_KEY_SPEC_SESSION_KEYRING = -3
_KEYCTL_INVALIDATE = 21


@x86_64_only
def test_a_key_in_the_session_keyring_reaches_no_output(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    name = f"quizgen-test-{uuid.uuid4().hex[:8]}"
    key = libc.syscall(
        _ADD_KEY, b"user", name.encode(), SECRET.encode(), len(SECRET), _KEY_SPEC_SESSION_KEYRING
    )
    assert key > 0, os.strerror(ctypes.get_errno())
    code = f"""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    for ring in (-3, -4, -5, -1, -2):  # session, user, user session, thread, process
        found = libc.syscall(250, 10, ctypes.c_long(ring), b"user", b"{name}", 0)  # KEYCTL_SEARCH
        if found < 0:
            found = libc.syscall(249, b"user", b"{name}", None, ctypes.c_long(ring))  # request_key
        buf = ctypes.create_string_buffer(256)
        n = libc.syscall(250, 11, ctypes.c_long(found), buf, 256)  # KEYCTL_READ
        print(ring, found, n, buf.raw[: max(n, 0)].decode(errors="replace"), ctypes.get_errno())
    """
    try:
        root = write_project(tmp_path / "project", deck(basic("keyring", code)))
        result = _uncached(root, monkeypatch, "build", "-j", "1")
        assert result.exit_code == 0, result.output
        built = outputs(root)
        assert "-3 " in built  # the snippet ran and printed
        assert SECRET not in built
    finally:
        libc.syscall(_KEYCTL, _KEYCTL_INVALIDATE, ctypes.c_long(key))


# -- the seccomp filter: each refused call, as a snippet makes it -----------------------------------

SYSCALLS = {  # x86_64 numbers: name -> (number, arguments)
    "ptrace": (101, (16, 1, 0, 0)),  # PTRACE_ATTACH to PID 1 (the zygote)
    "process_vm_readv": (310, (1, 0, 0, 0, 0, 0)),
    "pidfd_getfd": (438, (0, 0, 0)),
    "bpf": (321, (0, 0, 0)),
    "perf_event_open": (298, (0, 0, -1, -1, 0)),
    "userfaultfd": (323, (0,)),
    "io_uring_setup": (425, (1, 0)),
    "mount": (165, (0, 0, 0, 0, 0)),
    "unshare": (272, (0x10000000,)),  # CLONE_NEWUSER
    "setns": (308, (0, 0)),
    "kexec_load": (246, (0, 0, 0, 0)),
    "init_module": (175, (0, 0, 0)),
    "keyctl": (250, (0, -3, 0, 0, 0)),
    "add_key": (248, (0, 0, 0, 0, -3)),
}


@x86_64_only
def test_the_seccomp_filter_refuses_what_no_snippet_needs(
    tmp_path: Path,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    code = f"""
    import ctypes, fcntl, termios
    libc = ctypes.CDLL(None, use_errno=True)
    for name, (number, args) in {SYSCALLS!r}.items():
        ctypes.set_errno(0)
        got = libc.syscall(number, *[ctypes.c_long(a) for a in args])
        print(name, got, ctypes.get_errno())
    ctypes.set_errno(0)
    print("clone3", libc.syscall(435, None, ctypes.c_long(0)), ctypes.get_errno())
    master, slave = os.openpty()
    try:
        fcntl.ioctl(slave, termios.TIOCSTI, b"x")
        print("TIOCSTI", 0, 0)
    except OSError as exc:
        print("TIOCSTI", -1, exc.errno)
    """
    root = write_project(tmp_path / "project", deck(basic("syscalls", code)))
    result = _uncached(root, monkeypatch, "build", "-j", "1")
    assert result.exit_code == 0, result.output
    printed = _card(root, "syscalls")["outcome"]["output"].splitlines()
    expected = [f"{name} -1 1" for name in SYSCALLS] + ["clone3 -1 38", "TIOCSTI -1 1"]  # EPERM; ENOSYS
    assert printed == expected
