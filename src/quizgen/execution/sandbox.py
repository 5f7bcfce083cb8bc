"""The sandbox every snippet runs in: Linux namespaces entered once by the pool process (the zygote),
before it imports torch, so every worker forked from it inherits them at no cost per job.

- a user namespace: the rights to set up the others, none over the host;
- a network namespace: no network but its own loopback (nothing on the host's 127.0.0.1 is reachable);
- a mount namespace: every file system read-only, except fresh tmpfs folders for the temporary
  folder (each job's folder lives there, and what a job writes vanishes with the pool) and /dev/shm
  (torch's shared memory); `$HOME` is an empty folder, with the paths the pool needs (the Python
  installation, quizgen, the project) bound back read-only.

Processes are confined by isolate.py (a subreaper per worker ends every process a job starts).
Where namespaces are unavailable (macOS, kernels that forbid unprivileged user namespaces) `enter`
says why and the pool runs without; `require` makes that an error instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import socket
import struct
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
MS_REMOUNT = 32
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2

# Flags a user namespace may not drop from a mount it did not create: a remount must repeat them.
_LOCKED = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}
_KEEP_WRITABLE = ("/proc", "/sys", "/dev")  # kernel interfaces: not the user's files
TMPFS_SIZE = "size=1g,mode=1777"

MODES = ("auto", "require", "off")


class SandboxError(Exception):
    """The sandbox could not be set up (the message says which step and why)."""


@dataclass(frozen=True)
class Status:
    on: bool
    reason: str = ""  # why it is off


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(code)} (errno {errno.errorcode.get(code, code)})")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    libc = _libc()
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    enc = [None if s is None else s.encode() for s in (source, target, fstype, data)]
    _check(libc.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


def _umount(target: str) -> None:
    _check(_libc().umount2(target.encode(), MNT_DETACH), f"umount {target}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _mounts() -> list[tuple[str, int]]:
    """(mount point, locked flags) of every mount, parents before children."""
    found = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")  # \040 for spaces
            options = fields[5].split(",")
            found.append((point, sum(flag for name, flag in _LOCKED.items() if name in options)))
    return found


def _loopback_up() -> None:
    """Bring up `lo` in the new network namespace, so snippets may talk to themselves (gloo, sockets)."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, siocgifflags, ifreq))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _replace(folder: str, keep: Iterable[str], stash: str) -> None:
    """Put an empty writable folder in `folder`'s place, with the kept paths under it bound back."""
    real = {os.path.realpath(p) for p in keep}
    kept: list[str] = []
    for path in sorted(p for p in real if _under(p, folder) and p != folder and os.path.exists(p)):
        if not any(_under(path, k) for k in kept):  # a kept folder brings what is under it
            kept.append(path)
    os.makedirs(stash, exist_ok=True)
    _mount(folder, stash, None, MS_BIND | MS_REC)
    _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, TMPFS_SIZE)
    for path in kept:
        source = os.path.join(stash, os.path.relpath(path, folder))
        if os.path.isdir(source):
            os.makedirs(path, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "a").close()  # a mount point for a file
        _mount(source, path, None, MS_BIND | MS_REC)
    _umount(stash)


def start(mode: str, keep: Iterable[str] = ()) -> Status:
    """Enter the sandbox as `mode` asks (auto, require, off); the caller must be single-threaded.

    A forked probe tries first, so a platform without namespaces is found out before anything changes
    here; `require` turns that into a SandboxError.
    """
    if mode == "off":
        return Status(False, "turned off (--sandbox=off)")
    keep = list(keep)
    reason = _probe(keep)
    if reason:
        if mode == "require":
            raise SandboxError(f"the sandbox is required but unavailable: {reason}")
        return Status(False, reason)
    _enter(keep)
    return Status(True)


def _probe(keep: list[str]) -> str:
    """Why the sandbox cannot be entered here ('' when it can), found out in a throw-away child."""
    if not sys.platform.startswith("linux"):
        return f"namespaces are Linux only (this is {sys.platform})"
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _enter(keep)
            code = 0
        except BaseException as exc:  # anything here means: no sandbox
            os.write(write, str(exc).encode()[:2000])
            code = 1
        os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        message = f.read().decode(errors="replace")
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return message or f"the probe ended with status {os.waitstatus_to_exitcode(status)}"
    return ""


def _enter(keep: list[str]) -> None:
    uid, gid = os.getuid(), os.getgid()
    try:
        _check(_libc().unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET), "unshare")
    except AttributeError as exc:  # no unshare in this libc
        raise SandboxError(f"unshare: {exc}") from exc
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the host
    _loopback_up()
    _confine_files(keep)


def _confine_files(keep: list[str]) -> None:
    tmp = os.path.realpath(tempfile.gettempdir())
    home = os.path.realpath(os.path.expanduser("~"))
    # What stays writable is mounted fresh; then every other mount is made read-only.
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, TMPFS_SIZE)
    fresh = {"/dev/shm"}
    # The outer folder first: emptying it would hide a fresh one made inside it. An inner one still
    # there afterwards came back with a kept path (say $HOME inside the project): it is emptied too.
    for n, folder in enumerate(sorted({tmp, home}, key=len)):
        if folder != "/" and os.path.isdir(folder):
            _replace(folder, keep, f"/dev/shm/.quizgen-stash-{n}")
            fresh.add(folder)
    for folder in (tmp, home):  # one inside the other, emptied: an empty one in its place
        os.makedirs(folder, exist_ok=True)
    # Bound-back paths are mounts of their own under the fresh folders: they are made read-only too.
    for point, locked in _mounts():
        if point in fresh or any(_under(point, f) for f in _KEEP_WRITABLE):
            continue
        with contextlib.suppress(SandboxError):  # a mount hidden under another one cannot be reached
            _mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | locked)
    os.environ["HOME"] = home


def needed_paths() -> list[str]:
    """What the pool reads from: the Python installation, its import path, and the project (cwd)."""
    paths = [os.getcwd(), sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(sys.executable)]
    paths += [p for p in sys.path if p]
    return paths
