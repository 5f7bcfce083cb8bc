"""The sandbox every snippet runs in: Linux namespaces entered once by the pool process (the zygote),
before it imports torch, so every worker forked from it inherits them at no cost per job.

- a user namespace: the rights to set up the others, none over the host; once the sandbox is built
  the zygote drops every capability (and the bounding set, with no_new_privs), so no snippet can
  mount, unmount or remount anything, nor write a sysctl, nor regain rights by running a program;
- a mount namespace holding a fresh root (as bubblewrap and nsjail build one): an empty read-only
  tmpfs with, read-only, only what the pool needs bound in (`needed_paths`: the Python installation
  and its import path, quizgen, the system's /usr and library folders, `ld.so.cache`) and the paths
  the caller keeps (the project's cards folder); a fresh /proc of its own PID namespace with /proc/sys
  read-only; a /dev of six device nodes; size-capped tmpfs for /tmp (each job's folder lives there),
  /dev/shm and an empty $HOME (`HOME`); a made-up /etc/passwd, group and hosts. Nothing else of the
  host exists inside: not its $HOME, its other files, nor its Unix sockets (a session bus,
  docker.sock, an agent), which a path can no longer reach;
- a network namespace: no network but its own loopback (nothing on the host's 127.0.0.1 is reachable);
- an IPC namespace: no SysV shared memory, semaphores or message queues of the host, and none left
  behind (they go with the namespace);
- a PID namespace whose first process is the zygote: no host process is visible, and when the zygote
  ends, for any reason, the kernel kills every process left in it (daemons, `setsid`, double forks);
  its `pid_max` caps the processes and threads alive in it at once (`PID_LIMIT`, at least that many,
  at most 299 more: the kernel hands out numbers below 300 only until it first wraps round), which
  works for root too, where RLIMIT_NPROC does not; RLIMIT_NPROC is set as well (it counts for other
  users, on kernels before 6.14 whose `pid_max` is not per namespace; root there has no cap);
- a UTS namespace: the host's name is not visible (the sandbox's is `HOSTNAME`).

Memory budget: each worker may grow by `--memory` (RLIMIT_AS) and the tmpfs folders hold at most
TMP_BYTES + SHM_BYTES + HOME_BYTES in all, shared by the whole pool (tmpfs pages are not counted by
RLIMIT_AS; a build's most is workers * memory + that sum).

Processes are confined by isolate.py (a subreaper per worker ends every process a job starts).
Where a step cannot be set up (macOS, kernels that forbid unprivileged user namespaces, a /proc that
may not be mounted again, no way to cap processes) `start` says why, in a throw-away probe, before
anything changes, and the pool runs without any of it; `require` makes that an error instead.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import re
import resource
import select
import signal
import socket
import struct
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWUTS

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

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_SYS_PIVOT_ROOT = 155  # x86_64
_SYS_CAPSET = 126  # x86_64
_CAP_VERSION_3 = 0x20080522

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

MODES = ("auto", "require", "off")


class SandboxError(Exception):
    """The sandbox could not be set up (the message says which step and why)."""


@dataclass(frozen=True)
class Status:
    on: bool
    reason: str = ""  # why it is off


@dataclass(frozen=True)
class _Plan:
    """What the fresh root shows, worked out on the host before anything changes."""

    binds: list[str]  # real paths, none inside another
    links: dict[str, str]  # symlink on the way to one of them -> its target, made again inside


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


def _tmpfs(target: str, size: int, mode: str) -> None:
    os.makedirs(target, exist_ok=True)
    _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode={mode}")


def _prctl(option: int, value: int, what: str) -> None:
    libc = _libc()
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    _check(libc.prctl(option, value, 0, 0, 0), what)


def _write(path: str, text: str) -> None:
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


def _loopback_up() -> None:
    """Bring up `lo` in the new network namespace, so snippets may talk to themselves (gloo, sockets)."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, siocgifflags, ifreq))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))


def _under(path: str, folder: str) -> bool:
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


def _plan(paths: Iterable[str]) -> _Plan:
    links: dict[str, str] = {}
    real: set[str] = set()
    for path in paths:
        path = os.path.abspath(path)
        if not os.path.exists(path):
            continue
        resolved = _follow(path, links)
        if resolved == "/":
            raise SandboxError(f"{path} is the whole file system: it cannot be shown read-only alone")
        if any(_under(resolved, hidden) for hidden in _HIDDEN) and resolved not in SYSTEM_PATHS:
            continue  # /proc, /dev and /sys are made fresh
        real.add(resolved)
    binds: list[str] = []
    for path in sorted(real):  # a folder comes before what is inside it, and brings it along
        if not any(_under(path, b) for b in binds):
            binds.append(path)
    return _Plan(binds, links)


def start(mode: str, keep: Iterable[str] = (), parent: int | None = None) -> Status:
    """Enter the sandbox as `mode` asks (auto, require, off); the caller must be single-threaded.

    `keep` lists the paths the sandbox shows, read-only. A forked probe tries first, so a platform
    without namespaces is found out before anything changes here; `require` turns that into a
    SandboxError. On success this process is PID 1 of the new PID namespace: the process that called
    it waits for it outside and exits with its status, or kills it when `parent` (a pidfd) ends;
    inside, `parent` is closed, since a pidfd of a host process would let a snippet reach it.
    """
    if mode == "off":
        return Status(False, "turned off (--sandbox=off)")
    if not sys.platform.startswith("linux"):
        reason = f"namespaces are Linux only (this is {sys.platform})"
    else:
        try:
            plan = _plan(keep)
            reason = _probe(plan)
        except (SandboxError, OSError) as exc:
            reason = str(exc)
    if reason:
        if mode == "require":
            raise SandboxError(f"the sandbox is required but unavailable: {reason}")
        return Status(False, reason)
    try:
        _enter(plan, parent)
    except SandboxError:
        raise
    except Exception as exc:  # half set up: this process must not go on, in the sandbox or out of it
        raise SandboxError(f"the sandbox could not be entered: {exc}") from exc
    return Status(True)


def _probe(plan: _Plan) -> str:
    """Why the sandbox cannot be entered here ('' when it can), found out in a throw-away child."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _enter(plan, None)
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


def _enter(plan: _Plan, parent: int | None) -> None:
    uid, gid = os.getuid(), os.getgid()
    try:
        _check(_libc().unshare(_NAMESPACES), "unshare")
    except AttributeError as exc:  # no unshare in this libc
        raise SandboxError(f"unshare: {exc}") from exc
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _become_init(parent)
    _build_root(plan, uid, gid)
    _loopback_up()
    _check(_libc().sethostname(HOSTNAME.encode(), len(HOSTNAME)), "sethostname")
    resource.setrlimit(resource.RLIMIT_NPROC, (PID_LIMIT, PID_LIMIT))
    _drop_privileges()
    # Not traceable: a snippet could otherwise take over the zygote or another worker (ptrace,
    # pidfd_getfd) and change what other cards' jobs answer. Workers inherit this.
    _prctl(_PR_SET_DUMPABLE, 0, "prctl(PR_SET_DUMPABLE)")
    os.environ["HOME"] = HOME
    os.environ["TMPDIR"] = "/tmp"
    tempfile.tempdir = None  # found again from TMPDIR


def _become_init(parent: int | None) -> None:
    """Fork into the new PID namespace: the child goes on as its PID 1, the caller waits and exits.

    The child dies with the caller (PR_SET_PDEATHSIG), so killing the pool process the parent knows
    ends the namespace and with it every process in there; so does the end of `parent`, which the
    caller watches. stdin and stdout are the child's alone.
    """
    alive_read, alive_write = os.pipe()
    # Opened before the fork: the child's pivot_root changes this process's root as well (they share
    # the mount namespace), so from here on it must not need a path.
    devnull = os.open(os.devnull, os.O_RDWR)
    pid = os.fork()
    if pid:
        code = 1
        try:
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            child = os.pidfd_open(pid)
            if parent is not None and parent in select.select([child, parent], [], [])[0]:
                os.kill(pid, signal.SIGKILL)  # quizgen is gone: so is every process in the sandbox
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
        finally:  # never back into the caller: the child is the one that goes on
            os._exit(code if code >= 0 else 128 - code)
    os.close(devnull)
    os.close(alive_write)
    if parent is not None:
        os.close(parent)
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, "prctl(PR_SET_PDEATHSIG)")
    if select.select([alive_read], [], [], 0)[0]:  # the caller is gone already: its pipe end closed
        os._exit(1)
    os.close(alive_read)


def _pivot_root(new: str, old: str) -> None:
    _check(_libc().syscall(_SYS_PIVOT_ROOT, new.encode(), old.encode()), f"pivot_root {new}")


def _build_root(plan: _Plan, uid: int, gid: int) -> None:
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
        if any(_under(link, b) for b in plan.binds) or os.path.lexists(new + link):
            continue  # shown by a bind already (and never written through one)
        os.makedirs(os.path.dirname(new + link), exist_ok=True)
        os.symlink(target, new + link)
    os.makedirs(new + "/etc", exist_ok=True)
    for name, text in _ETC.items():
        if not os.path.lexists(f"{new}/etc/{name}"):
            _write(f"{new}/etc/{name}", text.format(uid=uid, gid=gid, home=HOME, host=HOSTNAME))
    # Everything but the writable tmpfs folders, the device nodes and /proc itself is read-only.
    devices = {f"{new}/dev/{d}" for d in _DEVICES}
    for point, locked in _mounts(new + "/proc"):
        if not _under(point, new) or point in writable | devices or point == new + "/proc":
            continue
        _mount(None, point, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | locked)
    os.chdir(new)
    _pivot_root(".", ".")  # the new root over the scratch one, which is then let go with the host's
    _check(_libc().umount2(b".", MNT_DETACH), "umount the host's root")
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
        _write(f"{proc}/sys/kernel/pid_max", str(PID_LIMIT + _RESERVED_PIDS))


def _drop_privileges() -> None:
    """Drop every capability, for good: nothing in the sandbox may change its mounts or regain rights."""
    _prctl(_PR_SET_NO_NEW_PRIVS, 1, "prctl(PR_SET_NO_NEW_PRIVS)")
    for cap in range(64):
        try:
            _prctl(_PR_CAPBSET_DROP, cap, "prctl(PR_CAPBSET_DROP)")
        except SandboxError:
            if ctypes.get_errno() != errno.EINVAL:  # EINVAL: past the last capability
                raise
            break
    header = struct.pack("Ii", _CAP_VERSION_3, 0)
    data = ctypes.create_string_buffer(24)  # effective, permitted, inheritable: two words each, all 0
    _check(_libc().syscall(_SYS_CAPSET, header, data), "capset")
    with open("/proc/self/status") as f:
        caps = dict(line.split(":\t") for line in f if line.startswith("Cap"))
    if any(int(caps[name], 16) for name in ("CapPrm", "CapEff", "CapBnd", "CapAmb")):
        raise SandboxError("capabilities were left after dropping them")


def needed_paths() -> list[str]:
    """What the pool reads from: the system, the Python installation and its import path (with
    quizgen), and the folders LD_LIBRARY_PATH names for the libraries torch loads."""
    paths = [
        *SYSTEM_PATHS,
        sys.executable,
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
    ]
    paths += [p for p in sys.path if os.path.isabs(p)]
    paths += [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep) if os.path.isabs(p)]
    return paths
