"""The sandbox's file system: a fresh root built from explicit binds (as bubblewrap and nsjail build
theirs), so nothing of the host exists inside unless it is bound in, read-only.

`plan` works out on the host what the root shows; `build_root`, run in the new mount namespace,
makes it: the binds, a fresh /proc of the PID namespace (its `pid_max` capping the processes), a /dev
of six device nodes, size-capped tmpfs folders for /tmp, /dev/shm and $HOME, and a made-up /etc.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass

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

_SYS_PIVOT_ROOT = 155  # x86_64

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

TMP_BYTES = 256 << 20  # /tmp: the jobs' folders and whatever snippets write

SHM_BYTES = 256 << 20  # /dev/shm: torch's shared memory

HOME_BYTES = 16 << 20  # $HOME: caches a library may write (matplotlib, torch hub)

PID_LIMIT = 1024  # processes and threads alive at once in the pool (at least this many may be)

_RESERVED_PIDS = 300  # numbers below this are handed out only until the first wrap

HOME = "/home/sandbox"

HOSTNAME = "quizgen-sandbox"

# What every Python needs of the system: programs and shared libraries (and the loader's cache).
SYSTEM_PATHS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc/ld.so.cache",
    "/etc/alternatives",
    "/sys/devices/system/cpu",  # how many CPUs there are: torch's cpuinfo reads it as it loads
)

_DEVICES = ("null", "zero", "full", "random", "urandom", "tty")

_HIDDEN = ("/proc", "/dev", "/sys")  # never bound in whole: made fresh (what is needed is listed above)

_ETC = {
    "passwd": "sandbox:x:{uid}:{gid}:sandbox:{home}:/bin/sh\n",
    "group": "sandbox:x:{gid}:\n",
    "hosts": "127.0.0.1 localhost {host}\n::1 localhost ip6-localhost\n",
    "hostname": "{host}\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
}


class SandboxError(Exception):
    """The sandbox could not be set up (the message says which step and why)."""


@dataclass(frozen=True)
class Plan:
    """What the fresh root shows, worked out on the host before anything changes."""

    binds: list[str]  # real paths, none inside another
    links: dict[str, str]  # symlink on the way to one of them -> its target, made again inside


def libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def check(result: int, what: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise SandboxError(f"{what}: {os.strerror(code)} (errno {errno.errorcode.get(code, code)})")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    lib = libc()
    lib.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    enc = [None if s is None else s.encode() for s in (source, target, fstype, data)]
    check(lib.mount(enc[0], enc[1], enc[2], flags, enc[3]), f"mount {target}")


def _tmpfs(target: str, size: int, mode: str) -> None:
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={mode}")


def write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def _mounts(proc: str) -> list[tuple[str, int]]:
    """(mount point, locked flags) of every mount, parents before children."""
    found = []
    with open(f"{proc}/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m[1], 8)), fields[4])  # \040 for spaces
            options = fields[5].split(",")
            found.append((point, sum(flag for name, flag in _LOCKED.items() if name in options)))
    return found


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _follow(path: str, links: dict[str, str], depth: int = 0) -> str:
    """`path` with every symlink on the way resolved; the symlinks met are noted in `links`."""
    if depth > 40:
        raise SandboxError(f"too many levels of symbolic links in {path}")
    current = "/"
    for part in path.strip("/").split("/"):
        if part in ("", "."):
            continue
        step = os.path.dirname(current) if part == ".." else os.path.join(current, part)
        if os.path.islink(step):
            target = os.readlink(step)
            links[step] = target
            step = _follow(os.path.normpath(os.path.join(os.path.dirname(step), target)), links, depth + 1)
        current = step
    return current


def plan(paths: Iterable[str]) -> Plan:
    links: dict[str, str] = {}
    real: set[str] = set()
    for path in paths:
        path = os.path.abspath(path)
        if not os.path.exists(path):
            continue
        resolved = _follow(path, links)
        if resolved == "/":
            raise SandboxError(f"{path} is the whole file system: it cannot be shown read-only alone")
        if any(under(resolved, hidden) for hidden in _HIDDEN) and resolved not in SYSTEM_PATHS:
            continue  # /proc, /dev and /sys are made fresh
        real.add(resolved)
    binds: list[str] = []
    for path in sorted(real):  # a folder comes before what is inside it, and brings it along
        if not any(under(path, b) for b in binds):
            binds.append(path)
    return Plan(binds, links)


def _pivot_root(new: str, old: str) -> None:
    check(libc().syscall(_SYS_PIVOT_ROOT, new.encode(), old.encode()), f"pivot_root {new}")


def build_root(plan: Plan, uid: int, gid: int) -> None:
    """Make the fresh root and change into it; the host's root is unmounted from this namespace."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the host
    # A scratch tmpfs becomes the root for a while, the host's under /old and the new root at /new,
    # so binds name host paths as /old/... whatever they are (bubblewrap's way).
    _tmpfs("/tmp", 1 << 20, "0700")
    os.mkdir("/tmp/new")
    os.mkdir("/tmp/old")
    _tmpfs("/tmp/new", 1 << 20, "0755")
    os.chdir("/tmp")
    _pivot_root(".", "old")
    os.chdir("/")
    new = "/new"
    writable = {new + "/tmp", new + "/dev/shm", new + HOME}
    _tmpfs(new + "/tmp", TMP_BYTES, "1777")
    _tmpfs(new + HOME, HOME_BYTES, "0700")
    _make_dev(new)
    os.mkdir(new + "/proc")
    _mount("proc", new + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    _cap_processes(new + "/proc")
    for part in ("sys", "sysrq-trigger", "irq", "bus"):  # kernel settings: read-only, like the rest
        path = f"{new}/proc/{part}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
    for path in plan.binds:
        target = new + path
        if os.path.isdir("/old" + path):
            os.makedirs(target, exist_ok=True)
        else:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            open(target, "a").close()  # a mount point for a file
        _mount("/old" + path, target, None, MS_BIND | MS_REC)
    for link, target in sorted(plan.links.items()):
        if any(under(link, b) for b in plan.binds) or os.path.lexists(new + link):
            continue  # shown by a bind already (and never written through one)
        os.makedirs(os.path.dirname(new + link), exist_ok=True)
        os.symlink(target, new + link)
    os.makedirs(new + "/etc", exist_ok=True)
    for name, text in _ETC.items():
        if not os.path.lexists(f"{new}/etc/{name}"):
            write(f"{new}/etc/{name}", text.format(uid=uid, gid=gid, home=HOME, host=HOSTNAME))
    # Everything but the writable tmpfs folders, the device nodes and /proc itself is read-only.
    devices = {f"{new}/dev/{d}" for d in _DEVICES}
    for point, locked in _mounts(new + "/proc"):
        if not under(point, new) or point in writable | devices or point == new + "/proc":
            continue
        _mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | locked)
    os.chdir(new)
    _pivot_root(".", ".")  # the new root over the scratch one, which is then let go with the host's
    check(libc().umount2(b".", MNT_DETACH), "umount the host's root")
    os.chdir("/")


def _make_dev(new: str) -> None:
    """A /dev of the harmless device nodes (bound from the host's: a user namespace cannot make them)."""
    os.mkdir(new + "/dev")
    for name in _DEVICES:
        open(f"{new}/dev/{name}", "a").close()
        _mount(f"/old/dev/{name}", f"{new}/dev/{name}", None, MS_BIND)
    os.symlink("/proc/self/fd", f"{new}/dev/fd")
    for n, name in enumerate(("stdin", "stdout", "stderr")):
        os.symlink(f"/proc/self/fd/{n}", f"{new}/dev/{name}")
    _tmpfs(new + "/dev/shm", SHM_BYTES, "1777")


def _cap_processes(proc: str) -> None:
    """Cap the processes of this PID namespace through its own pid_max (per namespace since Linux 6.14).

    Where it cannot be set, RLIMIT_NPROC (set too) caps them for any user but root; root on a kernel
    before 6.14 has no cap. The rest of the sandbox is still far better than none, so it goes on (the
    README says so), and the PID namespace still ends every process with the pool.
    """
    with contextlib.suppress(OSError):
        write(f"{proc}/sys/kernel/pid_max", str(PID_LIMIT + _RESERVED_PIDS))
