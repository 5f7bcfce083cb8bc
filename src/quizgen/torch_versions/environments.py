"""Other torch versions: one environment per version in the user's cache directory, made on request.

`<cache>/torch/<version>/` (the cache root of quizgen/project/state.py; $QUIZGEN_TORCH_DIR moves them all) is
a virtual environment without the system's or quizgen's site-packages, holding only what the worker
needs: torch pinned to the version, a numpy it works with, and what pip installs with them. It is built
under a hidden name and renamed into place once pip is done and its torch checked, so a half-made
environment (a download cut short) is never used. The worker runs quizgen's own code there through an
import path holding quizgen alone (`import_path`). Nothing here imports torch, and nothing is
downloaded unless `provision` is called.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import pty
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import quizgen
from quizgen.errors import QuizgenError
from quizgen.project import state
from quizgen.torch_versions import installed, versions

FOLDER = "torch"
_PARTIAL = ".partial-"  # an environment being made: `.partial-<version>-<pid>`
_IMPORTS = ".quizgen"  # import paths holding quizgen alone, one per quizgen location
_IN_USE = ".in-use-"  # `.in-use-<version>`: held (shared) by each pool running under that version
_VERSION = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+")  # not `\d`: it takes any script's digits
# `-I`: the working folder (often a downloaded card repository) is not on the import path, so a `pip/` or
# `venv/` package in it is never run with the user's rights (nor are user site-packages or PYTHON* vars).
PIP = ["{python}", "-I", "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "on"]
# The first torch whose wheels were all built against numpy 2's C API (pytorch/pytorch#107302: 2.3, but
# some 2.3.0 wheels were not); an older one fails to convert to and from numpy 2 arrays.
NUMPY_2_SINCE = (2, 3, 1)
# What one environment costs, as measured (issue 30): 2.1 and later download 2.7-2.9 GB (torch's CUDA
# wheels and their nvidia-* dependencies) and take 5 GB on disk; earlier ones somewhat less.
DOWNLOAD = "about 3 GB to download, 5 GB on disk"


class TorchError(QuizgenError):
    """A torch version that is malformed, not provisioned, or could not be provisioned."""


@dataclass(frozen=True)
class Environment:
    """A provisioned torch: its version, its folder and the bytes it takes on disk."""

    version: str
    path: Path
    size: int

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"


def root() -> Path:
    """The folder that holds one environment per torch version (not created): $QUIZGEN_TORCH_DIR, else
    `torch` in quizgen's cache folder (a CI cache or another disk may hold them: ~3 GB each)."""
    if chosen := os.environ.get("QUIZGEN_TORCH_DIR"):
        return Path(chosen).expanduser()
    return state.home() / FOLDER


def checked(version: str) -> str:
    """The version, if it is one (three numbers, as torch releases are named): it names a folder."""
    if not _VERSION.fullmatch(version):
        raise TorchError(f"'{version}' is not a torch version: give its three numbers, like 1.13.1 or 2.4.0")
    return version


def folder(version: str) -> Path:
    """Where the environment of `version` lives (whether or not it is there)."""
    return root() / checked(version)


def is_installed(version: str) -> bool:
    """Whether `version` is the torch installed with quizgen."""
    return installed.release() == version


def python_for(version: str) -> Path | None:
    """The Python that runs `version`: quizgen's own for the installed torch, else its environment's
    (None when it is not provisioned)."""
    if is_installed(checked(version)):
        return Path(sys.executable)
    python = folder(version) / "bin" / "python"
    return python if python.exists() else None


def require(version: str) -> Path:
    """python_for, or an error saying how to provision it (nothing is downloaded unasked)."""
    python = python_for(version)
    if python is None:
        raise TorchError(
            f"torch {version} is not provisioned: run `quizgen torch add {version}` first ({DOWNLOAD}, once)"
        )
    return python


def listing() -> list[Environment]:
    """The provisioned environments, oldest torch first (a half-made one is not listed)."""
    if not root().is_dir():
        return []
    found = [
        Environment(p.name, p, _size(p))
        for p in root().iterdir()
        if _VERSION.fullmatch(p.name) and (p / "bin" / "python").exists()
    ]
    return sorted(found, key=lambda e: tuple(map(int, e.version.split("."))))


def _size(path: Path) -> int:
    total = 0
    for parent, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(parent, name)).st_blocks * 512
    return total


def remove(version: str) -> Path:
    """Delete the environment of `version` (renamed away first: a build never sees half of it)."""
    path = folder(version)
    if not (path / "bin" / "python").exists():
        raise TorchError(f"torch {version} is not provisioned (`quizgen torch list` shows those that are)")
    marked = root() / f"{_IN_USE}{version}"
    with open(marked, "a+b") as marker:
        try:  # held until it is renamed away: no pool starts under it meanwhile
            fcntl.flock(marker, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TorchError(
                f"torch {version} is in use: a build or check runs cards under it; run `quizgen torch "
                f"remove {version}` again once it is done"
            ) from None
        doomed = root() / f"{_PARTIAL}{version}-{os.getpid()}"
        os.rename(path, doomed)
        marked.unlink()  # (a pool that waited on it finds the environment gone: `using` says so)
    shutil.rmtree(doomed, ignore_errors=True)
    return path


@contextlib.contextmanager
def using(python: Path) -> Iterator[None]:
    """Mark the environment `python` belongs to in use while a pool runs under it (`remove` refuses it
    meanwhile, and a removal under way is waited for); quizgen's own Python needs no mark."""
    version = python.parent.parent.name
    mine = python.parent.parent.parent == root() and _VERSION.fullmatch(version)
    if python == Path(sys.executable) or not mine:
        yield
        return
    with open(root() / f"{_IN_USE}{version}", "a+b") as marker:
        fcntl.flock(marker, fcntl.LOCK_SH)
        if not python.exists():  # (removed while this waited)
            raise TorchError(f"torch {version} was removed: `quizgen torch add {version}` to run under it")
        yield


def requirements(version: str) -> list[str]:
    """What pip installs: torch pinned, and a numpy that torch's C API works with."""
    numbers = tuple(int(n) for n in checked(version).split("."))
    numpy = "numpy" if numbers >= NUMPY_2_SINCE else "numpy<2"
    return [f"torch=={version}", numpy]


Progress = Callable[[bytes], None]  # pip's output as it comes (its progress bar where it draws one)
_SAID = ("Collecting ", "Downloading ", "Installing collected", "Successfully installed")


def progress_to(say: Callable[[str], None]) -> Progress:
    """pip's output told line by line where no terminal draws its bar: what it collects and downloads
    (each file with its size), what it installs."""
    pending = b""

    def told(data: bytes) -> None:
        nonlocal pending
        *lines, pending = (pending + data).replace(b"\r", b"\n").split(b"\n")
        for line in lines:
            text = _ESCAPES.sub("", line.decode(errors="replace")).strip()
            if text.startswith(_SAID):
                say(f"pip: {text}")

    return told


def provision(version: str, progress: Progress | None = None, pip: list[str] | None = None) -> Environment:
    """Make the environment of `version` (once: an existing one is kept) and return it.

    `pip` is the command that installs into an environment, its Python in place of `{python}`
    (tests give a fake one); by default that Python's own pip.
    """
    final = folder(version)
    if (final / "bin" / "python").exists():
        return Environment(version, final, _size(final))
    if is_installed(version):
        raise TorchError(f"torch {version} is the torch installed with quizgen: it needs no environment")
    root().mkdir(parents=True, exist_ok=True)
    _clean_partials()
    partial = root() / f"{_PARTIAL}{version}-{os.getpid()}"
    try:
        _venv(partial, pip=pip is None)
        python = partial / "bin" / "python"
        command = [part.replace("{python}", str(python)) for part in pip or PIP]
        _pip(command + requirements(version), version, progress)
        if versions.release(installed.of(python)) != version:  # checked before it is put in place
            raise TorchError(f"torch {version}: pip finished but did not install torch {version}")
        try:
            os.rename(partial, final)
        except OSError:
            if not (final / "bin" / "python").exists():  # not one made meanwhile by another quizgen
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return Environment(version, final, _size(final))


def _clean_partials() -> None:
    """Remove what a provisioning cut short left (its process is gone)."""
    for path in root().glob(f"{_PARTIAL}*"):
        pid = path.name.rpartition("-")[2]
        if not pid.isdigit() or not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _venv(path: Path, pip: bool) -> None:
    """A virtual environment of quizgen's Python (the worker runs quizgen's code), without site-packages."""
    command = [sys.executable, "-I", "-m", "venv", *([] if pip else ["--without-pip"]), str(path)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TorchError(
            f"could not make a virtual environment in {path}: {_last(done.stderr + done.stdout)}"
        )


def _pip(command: list[str], version: str, progress: Progress | None) -> None:
    """Run pip, its output passed to `progress` as it comes; a failure is summarised from pip's errors."""
    chunks: list[bytes] = []
    # pip draws its progress bar only on a terminal: given one (a pty) when the caller shows it.
    reader, writer = pty.openpty() if progress is not None else os.pipe()
    try:
        proc = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=writer, stderr=writer, env=pip_env()
        )
    except OSError as exc:
        os.close(reader)
        raise TorchError(f"could not run pip ({command[0]}): {exc.strerror or exc}") from None
    finally:
        os.close(writer)
    with contextlib.suppress(OSError):  # a pty's reader gets EIO once pip and its children are done
        while data := os.read(reader, 1 << 16):
            chunks.append(data)
            if progress is not None:
                progress(data)
    os.close(reader)
    if proc.wait() != 0:
        raise TorchError(f"could not provision torch {version}: {pip_failure(b''.join(chunks))}")


def pip_env() -> dict[str, str]:
    """The user's environment (proxies, pip's settings) without what would show pip another Python's
    packages: a PYTHONPATH holding a torch would pass for installed, and never reach the environment."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE")}


_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def pip_failure(output: bytes) -> str:
    """pip's first error, with the conflict that caused it if it names one (no progress bars, colours)."""
    text = _ESCAPES.sub("", output.decode(errors="replace")).replace("\r\n", "\n")
    lines = [line.rpartition("\r")[2].strip() for line in text.split("\n")]
    errors = [line.removeprefix("ERROR: ") for line in lines if line.startswith("ERROR: ")]
    if not errors:
        return _last("\n".join(lines))
    causes: list[str] = []
    if "The conflict is caused by:" in lines:
        for line in lines[lines.index("The conflict is caused by:") + 1 :]:
            if not line:
                break
            causes.append(line)
    return errors[0] + (f" ({'; '.join(causes)})" if causes else "")


def _last(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no message"


def import_path() -> Path:
    """A folder holding quizgen alone (a link to this quizgen's package), for another environment's
    worker: quizgen's own folder may be a site-packages holding the installed torch too."""
    package = Path(quizgen.__file__).resolve().parent
    digest = hashlib.sha256(str(package).encode()).hexdigest()[:16]
    path = root() / _IMPORTS / digest
    link = path / "quizgen"
    if not link.is_symlink() or Path(os.readlink(link)) != package:
        path.mkdir(parents=True, exist_ok=True)
        temporary = path / f".quizgen-{os.getpid()}"
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        temporary.symlink_to(package, target_is_directory=True)
        os.replace(temporary, link)
    return path


def runs_under(version: str | None) -> Path | None:
    """The Python a pool runs under for `version` (None: quizgen's own, the installed torch)."""
    return None if version is None else require(version)


def result_key(version: str | None) -> str | None:
    """The torch version results run under `version` are cached by (None: the installed torch's)."""
    return None if version is None else installed.of(require(version))


def size_text(size: int) -> str:
    """A download's or an environment's size as people read it."""
    return f"{size / 1e9:.1f} GB" if size >= 1e8 else f"{size / 1e6:.0f} MB"


def pip_progress(say: Callable[[str], None]) -> Progress:
    """pip's output passed through to a terminal as it comes (its progress bar); elsewhere, what it
    downloads and installs, line by line, to `say`."""
    if not sys.stderr.isatty():
        return progress_to(say)

    def show(data: bytes) -> None:
        sys.stderr.buffer.write(data)
        sys.stderr.flush()

    return show
