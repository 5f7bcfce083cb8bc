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
fresh_root.TMP_BYTES + SHM_BYTES + HOME_BYTES in all, shared by the whole pool (tmpfs pages are not counted by
RLIMIT_AS; a build's most is workers * memory + that sum).

Processes are confined by isolate.py (a subreaper per worker ends every process a job starts).
Where a step cannot be set up (macOS, kernels that forbid unprivileged user namespaces, a /proc that
may not be mounted again, no way to cap processes) `start` says why, in a throw-away probe, before
anything changes, and the pool runs without any of it; `require` makes that an error instead.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import resource
import select
import signal
import socket
import struct
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass

from quizgen.execution.fresh_root import (
    HOME,
    HOSTNAME,
    PID_LIMIT,
    SYSTEM_PATHS,
    Plan,
    SandboxError,
    build_root,
    check,
    libc,
    plan,
    write,
)

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
_NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWPID | CLONE_NEWUTS


_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_SYS_CAPSET = 126  # x86_64
_CAP_VERSION_3 = 0x20080522


MODES = ("auto", "require", "off")


@dataclass(frozen=True)
class Status:
    on: bool
    reason: str = ""  # why it is off


def _prctl(option: int, value: int, what: str) -> None:
    lib = libc()
    lib.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    check(lib.prctl(option, value, 0, 0, 0), what)


def _loopback_up() -> None:
    """Bring up `lo` in the new network namespace, so snippets may talk to themselves (gloo, sockets)."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, siocgifflags, ifreq))[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH14s", b"lo", flags | iff_up, b""))


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
            shown = plan(keep)
            reason = _probe(shown)
        except (SandboxError, OSError) as exc:
            reason = str(exc)
    if reason:
        if mode == "require":
            raise SandboxError(f"the sandbox is required but unavailable: {reason}")
        return Status(False, reason)
    try:
        _enter(shown, parent)
    except SandboxError:
        raise
    except Exception as exc:  # half set up: this process must not go on, in the sandbox or out of it
        raise SandboxError(f"the sandbox could not be entered: {exc}") from exc
    return Status(True)


def _probe(shown: Plan) -> str:
    """Why the sandbox cannot be entered here ('' when it can), found out in a throw-away child."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            _enter(shown, None)
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


def _enter(shown: Plan, parent: int | None) -> None:
    uid, gid = os.getuid(), os.getgid()
    try:
        check(libc().unshare(_NAMESPACES), "unshare")
    except AttributeError as exc:  # no unshare in this libc
        raise SandboxError(f"unshare: {exc}") from exc
    write("/proc/self/setgroups", "deny")
    write("/proc/self/uid_map", f"{uid} {uid} 1")
    write("/proc/self/gid_map", f"{gid} {gid} 1")
    _become_init(parent)
    build_root(shown, uid, gid)
    _loopback_up()
    check(libc().sethostname(HOSTNAME.encode(), len(HOSTNAME)), "sethostname")
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
    check(libc().syscall(_SYS_CAPSET, header, data), "capset")
    with open("/proc/self/status") as f:
        caps = dict(line.split(":\t") for line in f if line.startswith("Cap"))
    if any(int(caps[name], 16) for name in ("CapPrm", "CapEff", "CapBnd", "CapAmb")):
        raise SandboxError("capabilities were left after dropping them")


def needed_paths() -> list[str]:
    """What the pool reads from: the system, the Python installation and its import path (with
    quizgen), and the folders LD_LIBRARY_PATH names for the libraries torch loads. A pool under another
    torch runs its environment's Python (quizgen/torches.py), so that environment is what is bound."""
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
