"""Landlock (the kernel's unprivileged access control) for one job's process: it may write only beneath
its own folder, and signal or reach abstract sockets of no process outside its own job.

Jobs of a pool run side by side in one sandbox, as one user, sharing `/tmp`; without this a card's
snippet could rewrite the files another card's job is working with (a `torch.save` read back a moment
later) or stop its process, and that card's result, cached, would be the hostile card's word. The rules
go into a Landlock domain the job's process enters before its snippet runs; every process it starts
inherits them, and no process can leave a domain.

Reads are not restricted (the sandbox's root is read-only). `/dev/shm` stays writable to every job
(torch's shared memory), and so do the device files (`/dev/null`). Kernels without Landlock (before
5.13, or with it turned off) run jobs without it; the scopes need Landlock ABI 6 (Linux 6.12).
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections.abc import Iterable

from quizgen.execution.sandbox.libc import libc, prctl

_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # the same on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_WRITE_FILE = 1 << 1
_REMOVE_DIR, _REMOVE_FILE = 1 << 4, 1 << 5
_MAKE = sum(1 << bit for bit in range(6, 13))  # char, dir, reg, sock, fifo, block, sym
_REFER = 1 << 13  # ABI 2
_TRUNCATE = 1 << 14  # ABI 3
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


def abi() -> int:
    """The Landlock ABI this kernel offers (0: none)."""
    version = libc().syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(int(version), 0)


def confine(writable: Iterable[str], devices: str = "/dev") -> int:
    """Enter a domain in which this process (and what it starts) writes only beneath `writable` (and to
    the files of `devices`), and signals no process outside it. Returns the ABI used (0: none here)."""
    version = abi()
    if version == 0:
        return 0
    lib = libc()
    write = _WRITE_FILE | _REMOVE_DIR | _REMOVE_FILE | _MAKE
    write |= _REFER if version >= 2 else 0
    write |= _TRUNCATE if version >= 3 else 0
    scoped = _SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if version >= 6 else 0
    # struct landlock_ruleset_attr: handled_access_fs, handled_access_net (ABI 4), scoped (ABI 6)
    attr = struct.pack("QQQ", write, 0, scoped) if version >= 6 else struct.pack("Q", write)
    ruleset = lib.syscall(_SYS_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), 0)
    if ruleset < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
    try:
        devices_access = _WRITE_FILE | (_TRUNCATE if version >= 3 else 0)
        rules = [(devices, devices_access)] + [(path, write) for path in writable]
        for path, access in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                # struct landlock_path_beneath_attr (packed): allowed_access, parent_fd
                beneath = struct.pack("=Qi", access, fd)
                if lib.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, beneath, 0) != 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule {path}")
            finally:
                os.close(fd)
        prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        if lib.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return version
