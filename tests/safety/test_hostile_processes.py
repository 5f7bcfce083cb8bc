"""Building a stranger's repository: nothing of it runs before the sandbox, nothing of the user's
environment or host reaches a snippet, and no process, file or IPC object a snippet makes outlives
the build (issue 20, findings 2, 5, 6 and 8). Each test builds a hostile project with a fake $HOME and
checks the effect: markers not written, secrets absent from every output, processes gone."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import signal
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import quizgen
from quizgen.cli import cli
from tests.support.hostile import HOME_SECRET as SECRET
from tests.support.hostile import basic, deck, outputs, running
from tests.support.projects import write_project
from tests.support.waiting import wait_until

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox is Linux only")


def build(root: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Result:
    monkeypatch.chdir(root)
    return CliRunner().invoke(cli, ["build", "-j", "1", "--no-cache", *args])


# -- finding 2: the project's files are not imported by the pool ----------------------------------

MODULES = ("argparse", "json", "torch", "quizgen", "sitecustomize", "usercustomize", "selectors", "ctypes")


def test_modules_in_the_project_are_never_imported(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = write_project(tmp_path / "project", deck(basic("one", "print(1)")))
    for folder in (root, root / "cards"):
        for name in MODULES:
            marker = home / f"imported-{name}-from-{folder.name}"
            (folder / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    result = build(root, monkeypatch)
    assert sorted(p.name for p in home.iterdir() if p.name.startswith("imported-")) == []
    assert result.exit_code == 0, result.output


def test_python_dash_m_quizgen_in_the_project_imports_none_of_its_modules(tmp_path: Path, home: Path) -> None:
    # `python -m quizgen` puts the working folder first on the import path; the README's `quizgen` script
    # does not. Either way a `yaml.py` or `click.py` of the repository is never imported.
    root = write_project(tmp_path / "project", deck(basic("one", "print(1)")))
    for name in ("yaml", "click", "json", "jinja2", "genanki", "markdown_it", "tomllib"):
        (root / f"{name}.py").write_text(f"open({str(home / ('imported-' + name))!r}, 'w').close()\n")
    env = {**os.environ, "PYTHONPATH": str(Path(quizgen.__file__).parent.parent)}
    command = [sys.executable, "-m", "quizgen", "check", "-j", "1", "--no-cache"]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert sorted(p.name for p in home.iterdir() if p.name.startswith("imported-")) == []
    assert done.returncode == 0, done.stdout + done.stderr


# -- finding 5: the user's environment does not reach snippets -----------------------------------


@pytest.mark.parametrize("sandbox", ["auto", "off"])
def test_a_token_in_the_environment_reaches_no_output(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, sandbox: str
) -> None:
    monkeypatch.setenv("API_TOKEN", SECRET)
    code = 'print(os.environ.get("API_" + "TOKEN"))\nprint(sorted(os.environ.items()))'
    root = write_project(tmp_path / "project", deck(basic("env", code)))
    result = build(root, monkeypatch, "--sandbox", sandbox)
    assert result.exit_code == 0, result.output
    built = outputs(root)
    assert "PYTHONHASHSEED" in built  # the environment was printed
    assert SECRET not in built and "API_TOKEN" not in built


# -- finding 6: host paths and Unix sockets do not exist inside -----------------------------------


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside $HOME and $TMPDIR, as a session bus's or docker's socket folder is."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="qz-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_host_socket_and_file_outside_home_and_tmp_do_not_exist_inside(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch, outside: Path
) -> None:
    (outside / "secret.txt").write_text(SECRET)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(outside / "bus.sock"))
    server.listen(8)
    server.setblocking(False)
    code = f"""
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect("{outside}/bus.sock")
            s.sendall(b"hello from a snippet")
        except OSError as exc:
            print("socket:", type(exc).__name__)
        try:
            print(open("{outside}/secret.txt").read())
        except OSError as exc:
            print("file:", type(exc).__name__)
    """
    root = write_project(tmp_path / "project", deck(basic("bus", code)))
    heard = b""
    try:
        result = build(root, monkeypatch)
        with contextlib.suppress(BlockingIOError):
            while True:
                conn, _ = server.accept()
                conn.settimeout(1)
                with contextlib.suppress(OSError):
                    heard += conn.recv(100)
                conn.close()
    finally:
        server.close()
    assert result.exit_code == 0, result.output
    assert b"snippet" not in heard
    built = outputs(root)
    assert SECRET not in built
    assert "socket: FileNotFoundError" in built and "file: FileNotFoundError" in built


def test_no_snippet_can_make_a_bound_folder_writable(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the rights a user namespace gives, a snippet could remount a read-only bind read-write."""
    root = tmp_path / "project"
    code = f"""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
        for attempt in range(2):
            for point in ["/", "{root}/cards", "{root}", "{tmp_path}", "/tmp"]:
                libc.mount(None, point.encode(), None, 32 | 4096, None)  # MS_REMOUNT | MS_BIND: read-write
                try:
                    with open("{root}/cards/written.txt", "w") as f:
                        f.write("x")
                except OSError:
                    pass
            libc.unshare(0x10000000 | 0x00020000)  # then in a user namespace of its own, if it may
    """
    write_project(root, deck(basic("remount", code)))
    build(root, monkeypatch)
    assert not (root / "cards" / "written.txt").exists()


# -- finding 8: a process-count cap, size-capped tmpfs, an IPC namespace --------------------------


def test_a_fork_bomb_fails_its_card_and_leaves_nothing(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = f"{1000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**9}"
    code = f"""
        import subprocess
        procs = [subprocess.Popen(["sleep", "{token}"]) for _ in range(3000)]
        print("started", len(procs))
    """
    root = write_project(tmp_path / "project", deck(basic("bomb", code), basic("after", "print('after')")))
    result = build(root, monkeypatch)
    assert result.exit_code == 1, result.output  # the bomb's card failed, and said where
    assert result.output.startswith("Error: cards/hostile.yaml:") and "card 'bomb'" in result.output
    assert "BlockingIOError" in result.output
    assert wait_until(lambda: not running(token), 10), running(token)


def test_filling_tmp_or_shm_stops_at_its_cap(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code = """
        for name, folder in [("/tmp", os.environ["TMPDIR"]), ("/dev/shm", "/dev/shm")]:  # the job's own /tmp
            chunk, written = b"x" * (1 << 20), 0
            try:
                for n in range(2048 // 32):  # 2 GiB in files of 32 MiB (a file may hold 64)
                    with open(f"{folder}/fill-{n}", "wb") as f:
                        for _ in range(32):
                            f.write(chunk)
                            written += 1
            except OSError as exc:
                print(name, "stopped:", type(exc).__name__)
            print(name, written, "MiB")
    """
    root = write_project(tmp_path / "project", deck(basic("fill", code)))
    result = build(root, monkeypatch)
    assert result.exit_code == 0, result.output
    built = outputs(root)
    for folder in ("/tmp", "/dev/shm"):
        assert f"{folder} stopped: OSError" in built
        written = int(re.findall(rf"{folder} (\d+) MiB", built)[0])
        assert written <= 256, f"{folder}: {written} MiB written"


_IPC_CREAT, _IPC_RMID, _SHM_SIZE = 0o1000, 0, 4096


def _shm_ids(key: int) -> list[int]:
    """The host's SysV shared memory segments with `key`."""
    ids = []
    with open("/proc/sysvipc/shm") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if int(fields[0]) == key:
                ids.append(int(fields[1]))
    return ids


def _remove_shm(key: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    for shmid in _shm_ids(key):
        libc.shmctl(shmid, _IPC_RMID, None)


def test_sysv_shared_memory_is_not_shared_with_the_host(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    host_key, snippet_key = (0x5100_0000 + uuid.uuid4().int % 0xFFFFFF for _ in range(2))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    shmid = libc.shmget(host_key, _SHM_SIZE, _IPC_CREAT | 0o600)
    assert shmid >= 0
    address = libc.shmat(shmid, None, 0)
    ctypes.memmove(address, SECRET.encode(), len(SECRET))
    libc.shmdt(ctypes.c_void_p(address))
    code = f"""
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.shmat.restype = ctypes.c_void_p
        found = libc.shmget({host_key}, 0, 0)
        if found >= 0:
            print(ctypes.string_at(libc.shmat(found, None, 0), 64))
        else:
            print("host segment: not found")
        print("made", libc.shmget({snippet_key}, 4096, 0o1000 | 0o600) >= 0)
    """
    root = write_project(tmp_path / "project", deck(basic("shm", code)))
    try:
        result = build(root, monkeypatch)
        left = _shm_ids(snippet_key)
    finally:
        _remove_shm(host_key)
        _remove_shm(snippet_key)
    assert result.exit_code == 0, result.output
    built = outputs(root)
    assert SECRET not in built and "host segment: not found" in built and "made True" in built
    assert left == []


# -- finding 8: a build killed with SIGTERM (or SIGKILL) leaves no process ------------------------


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            found += [int(p) for p in f.read().split()]
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_build_leaves_no_process(tmp_path: Path, home: Path, sig: signal.Signals) -> None:
    token = f"{1000 + uuid.uuid4().int % 1000}.{uuid.uuid4().int % 10**9}"
    code = f"""
        import subprocess, time
        subprocess.Popen(["sleep", "{token}"])
        subprocess.Popen(["setsid", "sh", "-c", "sleep {token} &"])  # a daemon: double forked, own session
        time.sleep(120)
    """
    root = write_project(tmp_path / "project", deck(basic("daemon", code)))
    src = str(Path(quizgen.__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "quizgen", "build", "-j", "1", "--no-cache"],
        cwd=root,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert wait_until(lambda: len(running(token)) >= 2, 90), "the card's processes never started"
        pools = _children(proc.pid)
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert wait_until(lambda: not running(token), 15), running(token)
        assert wait_until(lambda: not any(os.path.exists(f"/proc/{p}") for p in pools), 15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in running(token):  # on a failure: leave nothing behind either
            os.kill(pid, signal.SIGKILL)
    if sig == signal.SIGTERM:
        assert proc.returncode != 0
        assert b"Traceback" not in (proc.stdout.read() if proc.stdout else b"")


def test_the_pool_process_is_not_the_project(tmp_path: Path) -> None:
    """The pool starts in /, with -P and -s, and quizgen's folder first on its import path."""
    from quizgen.execution.pool import Pool

    with Pool(1, sandbox="off", warm=False) as pool:
        pool.ready()
        with open(f"/proc/{pool.proc.pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        cwd = os.readlink(f"/proc/{pool.proc.pid}/cwd")
    assert cwd == "/" and b"-P" in argv and b"-s" in argv


def test_a_snippet_cannot_take_over_the_pool_or_reach_quizgen(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Tracing the zygote would let a snippet change other cards' answers; a pidfd of quizgen's own
    process (pidfd_getfd) would hand it quizgen's open files, outside the sandbox."""
    code = """
        import ctypes, errno
        libc = ctypes.CDLL(None, use_errno=True)
        libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
        if libc.ptrace(16, os.getppid(), None, None) == 0:  # PTRACE_ATTACH to the process that forked us
            print("att" + "ached")
            os.waitpid(os.getppid(), 0x40000000)  # __WALL: until it has stopped, so it can be let go
            libc.ptrace(17, os.getppid(), None, None)  # PTRACE_DETACH
        stolen = []
        for fd in map(int, os.listdir("/proc/self/fd")):
            try:
                if "pidfd" not in os.readlink(f"/proc/self/fd/{fd}"):
                    continue
            except OSError:
                continue
            for target in range(64):
                got = libc.syscall(438, fd, target, 0)  # pidfd_getfd
                if got >= 0:
                    stolen.append(os.readlink(f"/proc/self/fd/{got}"))
        print("stolen", stolen)
    """
    root = write_project(tmp_path / "project", deck(basic("takeover", code)))
    result = build(root, monkeypatch)
    assert result.exit_code == 0, result.output
    built = outputs(root)
    assert "stolen []" in built and "attached" not in built
