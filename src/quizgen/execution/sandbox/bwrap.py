"""The sandbox every snippet runs in: bubblewrap (`bwrap`, the engine Flatpak is built on) with a seccomp
filter, around the whole worker pool.

quizgen does not set up namespaces itself: this module only writes bwrap's command line.

- `--unshare-all` (user, mount, PID, IPC, network, UTS, cgroup namespaces) and `--disable-userns`: no
  host process is visible, no network but the sandbox's own loopback, no SysV IPC of the host, and no
  snippet can make a namespace of its own;
- `--new-session`: the pool has no controlling terminal, so no snippet can push input into the user's
  shell (TIOCSTI) or write escapes to it through `/dev/tty` (bwrap's fix for CVE-2017-5226);
- `--cap-drop ALL`, `--die-with-parent`;
- a fresh root holding, read-only, only what the pool needs (`paths`: the system's programs and
  libraries, the Python installation and its import path with quizgen), a fresh `/proc` and `/dev`,
  size-capped tmpfs for `/tmp` (each job's folder lives there), `/dev/shm` and an empty `$HOME`, and a
  made-up `/etc/passwd`, `group` and `hosts`. Nothing of the project is bound in (snippets get their
  code with the job; tracebacks take the lines from there), so no card reaches `.git` or another file
  of the repository, whatever symlinks it ships;
- `--seccomp`: a filter (libseccomp, through pyseccomp) refusing what no snippet needs (`DENIED`):
  the keyring, tracing other processes or reading their memory, BPF, perf events, userfaultfd,
  io_uring, mounts, namespaces, kernel modules and kexec, and the TIOCSTI and TIOCLINUX ioctls.

bwrap itself cannot cap the number of processes. Where the kernel keeps `pid_max` per PID namespace
(Linux 6.14 and later), util-linux's `unshare` makes an outer PID namespace whose `pid_max` is set to
PID_LIMIT (a nested namespace is held to its ancestors' limits), with bwrap started inside it; on older
kernels that write fails and the pool runs without a process cap (timeouts still end every process).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

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

_TMPFS = (("/tmp", TMP_BYTES, "1777"), ("/dev/shm", SHM_BYTES, "1777"), (HOME, HOME_BYTES, "0700"))

_HIDDEN = ("/proc", "/dev", "/sys")  # never bound in whole: made fresh (what is needed is listed above)

_ETC = {
    "passwd": "sandbox:x:{uid}:{gid}:sandbox:{home}:/bin/sh\n",
    "group": "sandbox:x:{gid}:\n",
    "hosts": "127.0.0.1 localhost {host}\n::1 localhost ip6-localhost\n",
    "hostname": "{host}\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
}

# System calls no snippet needs, refused with EPERM (flatpak's list, common/flatpak-run.c, is the model).
DENIED = (
    # the kernel keyring: a key of the shell that started quizgen is found and read through these
    "add_key",
    "keyctl",
    "request_key",
    # other processes: tracing, reading or writing their memory, taking their file descriptors
    "ptrace",
    "process_vm_readv",
    "process_vm_writev",
    "pidfd_getfd",
    "kcmp",
    # kernel attack surface no snippet uses
    "bpf",
    "perf_event_open",
    "userfaultfd",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "lookup_dcookie",
    "syslog",
    "uselib",
    "acct",
    "quotactl",
    "quotactl_fd",
    "vhangup",
    # mounts and namespaces (bwrap has built the sandbox: nothing in it may change it)
    "mount",
    "umount",
    "umount2",
    "pivot_root",
    "chroot",
    "move_mount",
    "open_tree",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "mount_setattr",
    "unshare",
    "setns",
    "name_to_handle_at",
    "open_by_handle_at",
    # the machine itself
    "kexec_load",
    "kexec_file_load",
    "init_module",
    "finit_module",
    "delete_module",
    "reboot",
    "swapon",
    "swapoff",
    "settimeofday",
    "clock_settime",
    "clock_adjtime",
    "adjtimex",
)

_TIOCSTI = 0x5412  # push a byte into a terminal's input
_TIOCLINUX = 0x541C  # on a virtual console, can copy and paste the screen: the same as TIOCSTI
_CLONE_NEWUSER = 0x10000000


class SandboxError(Exception):
    """The sandbox cannot be started here (the message says why and what to do)."""


@dataclass(frozen=True)
class Launch:
    """The command that starts the pool in the sandbox, and the file descriptors it reads at start."""

    argv: list[str]
    fds: list[int] = field(default_factory=list)

    def close(self) -> None:
        """Close this side's copies of `fds` (the started process has its own)."""
        for fd in self.fds:
            os.close(fd)


def unavailable() -> str:
    """Why the sandbox cannot start here ('' when bwrap is installed)."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap is Linux only (this is {sys.platform})"
    if shutil.which("bwrap") is None:
        return (
            "bubblewrap (bwrap) is not installed: install it (Debian and Ubuntu: "
            "`sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`), "
            "or pass --sandbox=off to run this repository's snippets with your own rights "
            "(only for cards you trust)"
        )
    return ""


def seccomp_filter() -> int:
    """A memfd holding the compiled filter (BPF), at offset 0, for `bwrap --seccomp FD`."""
    try:
        import pyseccomp as seccomp
    except (ImportError, OSError) as exc:  # pyseccomp is a dependency; libseccomp is the system's
        raise SandboxError(
            f"the seccomp filter cannot be built ({exc}): install libseccomp (Debian: libseccomp2)"
        ) from exc
    deny = seccomp.ERRNO(1)  # EPERM
    rules = seccomp.SyscallFilter(seccomp.ALLOW)
    for name in DENIED:
        try:
            rules.add_rule(deny, name)
        except (RuntimeError, ValueError, OSError):
            continue  # a call this architecture or libseccomp does not know: it cannot be made
    for request in (_TIOCSTI, _TIOCLINUX):  # the kernel reads the request as 32 bits: only those count
        rules.add_rule(deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    rules.add_rule(deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER))
    # clone3's flags are in memory a filter cannot read: ENOSYS makes glibc fall back to clone
    rules.add_rule(seccomp.ERRNO(38), "clone3")
    fd = os.memfd_create("quizgen-seccomp", 0)
    with os.fdopen(os.dup(fd), "wb") as out:
        rules.export_bpf(out)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _data(name: str, text: str) -> int:
    fd = os.memfd_create(f"quizgen-{name}", 0)
    os.write(fd, text.encode())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


@functools.cache
def _python_paths(python: str, import_path: str) -> tuple[str, ...]:
    """What `python` reads from: its installation and its import path (asked of it, as the pool will
    start it: `-P -s`, PYTHONPATH `import_path`, in `/`)."""
    ask = "import json, sys; print(json.dumps([sys.executable, sys.prefix, sys.base_prefix, "
    ask += "sys.exec_prefix, sys.base_exec_prefix, *sys.path]))"
    env = {"PYTHONPATH": import_path, "PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    try:
        out = subprocess.run(
            [python, "-P", "-s", "-c", ask], capture_output=True, env=env, cwd="/", timeout=60, check=True
        ).stdout
        return tuple(p for p in json.loads(out) if isinstance(p, str) and os.path.isabs(p))
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        raise SandboxError(f"{python} could not say where it is installed: {exc}") from exc


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def binds(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(source, place inside) for each path to show: each at its real place, and at the place named
    when a symlink leads there (a venv's `bin/python`), so both names work inside. A folder brings
    what is under it; /proc, /dev and /sys are never shown whole."""
    wanted: dict[str, str] = {}
    for path in paths:
        path = os.path.normpath(path)
        if not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if real == "/":
            raise SandboxError(f"{path} is the whole file system: it cannot be shown read-only alone")
        for place in dict.fromkeys([real, path]):
            if any(_under(place, hidden) for hidden in _HIDDEN) and place not in SYSTEM_PATHS:
                continue
            wanted[place] = real
    shown: list[tuple[str, str]] = []
    for place in sorted(wanted):  # a folder comes before what is inside it, and may show it already
        seen = (
            os.path.join(src, os.path.relpath(place, inside))
            for src, inside in shown
            if _under(place, inside)
        )
        if not any(os.path.realpath(path) == wanted[place] for path in seen):
            shown.append((wanted[place], place))
    return shown


def launch(
    inner: Sequence[str], env: Mapping[str, str], keep: Iterable[str] = (), python: str = sys.executable
) -> Launch:
    """The command running `inner` (the pool) in the sandbox with exactly the environment `env`.

    `keep` adds paths to show read-only (another torch's pool: where its import path's link leads)."""
    why = unavailable()
    if why:
        raise SandboxError(why)
    fds = [seccomp_filter()]
    uid, gid = os.getuid(), os.getgid()
    argv = [str(shutil.which("bwrap")), "--unshare-all", "--unshare-user", "--disable-userns"]
    # --as-pid-1: the pool itself is PID 1, so no bwrap process inside holds the pool's pipes to quizgen
    # (a snippet could otherwise open /proc/1/fd/1 and write replies for other cards' jobs).
    argv += ["--new-session", "--as-pid-1"]
    argv += ["--die-with-parent", "--cap-drop", "ALL", "--uid", str(uid), "--gid", str(gid)]
    argv += ["--hostname", HOSTNAME, "--clearenv", "--chdir", "/"]
    for name, value in {**env, "HOME": HOME, "TMPDIR": "/tmp"}.items():
        argv += ["--setenv", name, value]
    for link in SYSTEM_PATHS:  # /bin -> usr/bin: the link itself, so no folder is shown twice
        if os.path.islink(link) and not os.path.isabs(os.readlink(link)):
            argv += ["--symlink", os.readlink(link), link]
    # The fresh folders first: a bind below one (a venv in /tmp) must be mounted on it, not hidden by it.
    argv += ["--proc", "/proc", "--dev", "/dev"]
    for place, size, perms in _TMPFS:
        argv += ["--perms", perms, "--size", str(size), "--tmpfs", place]
    system = [p for p in SYSTEM_PATHS if not (os.path.islink(p) and not os.path.isabs(os.readlink(p)))]
    paths = [*system, *_python_paths(python, env.get("PYTHONPATH", "")), *keep]
    for source, place in binds(paths):
        argv += ["--ro-bind", source, place]
    for name, text in _ETC.items():
        fds.append(_data(name, text.format(uid=uid, gid=gid, home=HOME, host=HOSTNAME)))
        argv += ["--ro-bind-data", str(fds[-1]), f"/etc/{name}"]
    argv += ["--remount-ro", "/"]  # the fresh root itself: only the tmpfs folders are writable
    argv += ["--seccomp", str(fds[0]), "--", *inner]
    return Launch(_capped(argv), fds)


def _capped(argv: list[str]) -> list[str]:
    """`argv` inside an outer PID namespace whose pid_max caps the processes of the sandbox (Linux 6.14
    and later keep pid_max per namespace; a nested one is held to its ancestors'). Where `unshare` is
    missing the pool has no process cap; where the kernel refuses the write, likewise."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return argv
    cap = f'echo {PID_LIMIT + _RESERVED_PIDS} > /proc/sys/kernel/pid_max 2>/dev/null; exec "$@"'
    outer = [unshare, "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc"]
    return [*outer, "--", "/bin/sh", "-c", cap, "sh", *argv]
