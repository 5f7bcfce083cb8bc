"""Noticing that a job changed what the next job in the same worker would see.

A worker runs many jobs, so a card that patches torch (`torch.optim.Optimizer.zero_grad = ...`) or
replaces a module in `sys.modules` would change later cards' answers. After
each job the worker compares every module's and class's namespace with how it was when the worker
started; a job that changed one is the worker's last: the next job runs in a fresh worker forked from
the warm zygote. Its own result stands (it ran from the clean state) and is cached; the build names the
card and what it changed. torch's global settings that live in C (default dtype, grad mode, threads,
...) are reset before every job instead (runner.reset_state).

What torch itself changes on first use is not a card's doing: the zygote makes those changes before
the watch is taken (worker._warm_up), the step-profiling wrapper torch puts on an optimizer class the
first time one is made is recognised as such (a cold pool skips the warm-up), and the few entries torch
leaves changed after ordinary use (a hook counter, the excepthook `init_process_group` wraps) are put
back after every job (`Watch.restore`), so that no later card sees them either; so is the environment
(a card may set variables, as DDP's tutorials do: the next job starts with the worker's). A job that
imported a module retires its worker quietly (`Watch.imported`): a later card would find it. Global hooks
and an open process group live in dicts and objects no namespace entry replaces: `torch_settings` looks
at them.

Comparing every namespace entry by entry costs ~30 ms; CPython keeps a version tag in every dict
that changes with each write (PEP 509), so the check reads ~8000 tags and looks closer only at the
dicts whose tag moved. Read one by one through ctypes the tags cost ~0.7 ms a job, more than most
snippets; gathered at once through a numpy view of the address space, ~20 µs. Where the tag cannot be
read (another interpreter), the slow path compares identities.
"""

from __future__ import annotations

import ctypes
import gc
import os
import sys
from collections.abc import Callable, Iterator
from types import CodeType, ModuleType
from typing import Any

from quizgen.execution import compat

_PUTENV, _UNSETENV = os.putenv, os.unsetenv  # (taken before any card could replace them)
_VERSION_OFFSET = 3 * ctypes.sizeof(ctypes.c_ssize_t)  # PyDictObject: refcnt, type, ma_used, ma_version_tag


def _namespaces() -> Iterator[tuple[str, dict[str, object]]]:
    """Every module namespace, every class namespace defined in one, sys.modules and the environment."""
    yield "sys.modules", sys.modules  # type: ignore[misc]
    yield "os.environ", os.environ._data  # type: ignore[attr-defined]
    for name, module in list(sys.modules.items()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict) or name.split(".")[0] in _OWN:
            continue
        yield name, namespace
        for value in list(namespace.values()):
            if isinstance(value, type) and getattr(value, "__module__", None) == name:
                inner = gc.get_referents(value.__dict__)  # the dict behind the mappingproxy
                if inner and isinstance(inner[0], dict):
                    yield f"{name}.{value.__qualname__}", inner[0]


def _tag_reader(dicts: list[dict[str, object]]) -> Callable[[], Any]:
    """A function giving every dict's version tag now: a numpy array, or a list without numpy.

    The numpy array is a view of the address range the dicts span (nothing is copied or touched until
    indexed), indexed at each tag; the Watch holds the dicts, so every address stays theirs."""
    addresses = [id(d) + _VERSION_OFFSET for d in dicts]
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with torch
        cells = [ctypes.c_uint64.from_address(a) for a in addresses]
        return lambda: [cell.value for cell in cells]
    low = min(addresses)
    span = (max(addresses) - low) // 8 + 1
    pointer = ctypes.cast(ctypes.c_void_p(low), ctypes.POINTER(ctypes.c_uint64))
    memory = numpy.ctypeslib.as_array(pointer, shape=(span,))
    index = numpy.array([(a - low) // 8 for a in addresses], dtype=numpy.intp)
    return lambda: memory[index]


def _tags_work() -> bool:
    probe: dict[str, int] = {}
    before = ctypes.c_uint64.from_address(id(probe) + _VERSION_OFFSET).value
    probe["x"] = 1
    return sys.implementation.name == "cpython" and (
        ctypes.c_uint64.from_address(id(probe) + _VERSION_OFFSET).value != before
    )


class Watch:
    """The namespaces as they were when the worker started."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self.dicts: list[dict[str, object]] = []
        self.entries: list[dict[str, int]] = []
        for name, namespace in _namespaces():
            self.names.append(name)
            self.dicts.append(namespace)
            self.entries.append({key: id(value) for key, value in list(namespace.items())})
        self.fast = _tags_work()
        self.read_tags = _tag_reader(self.dicts) if self.fast else (lambda: [])
        self.tags = self.read_tags()
        self.module_ids = {name: id(module) for name, module in sys.modules.items()}
        self.modules = len(sys.modules)
        self.settings = torch_settings()
        self.kept = _kept()
        self.profiled = _profiled_step_code()
        self.environ = dict(os.environ._data)  # type: ignore[attr-defined]  # (bytes: the very objects)

    def restore(self) -> None:
        """Put back the entries torch leaves changed after ordinary use (RESTORED) as they were, and the
        environment (DDP's tutorials set MASTER_ADDR and MASTER_PORT): later jobs read neither."""
        for owner, attribute, value in self.kept:
            if getattr(owner, attribute, _MISSING) is not value:
                setattr(owner, attribute, value)
        data: dict[bytes, bytes] = os.environ._data  # type: ignore[attr-defined]
        if data != self.environ:
            for key in [key for key in data if key not in self.environ]:
                _UNSETENV(key)
                del data[key]
            for key, value in self.environ.items():
                if data.get(key) is not value:
                    _PUTENV(key, value)
                    data[key] = value  # the same object: the watch compares identities

    def accept(self) -> None:
        """Take the namespaces as they are now as the clean state (a new worker's own set-up changed some)."""
        moved = self._moved() if self.fast else range(len(self.dicts))
        for i in moved:
            self.entries[i] = {key: id(value) for key, value in list(self.dicts[i].items())}
        self.tags = self.read_tags()
        self.environ = dict(os.environ._data)  # type: ignore[attr-defined]
        self.modules = len(sys.modules)

    def imported(self) -> bool:
        """Whether a module was imported since the worker started: a later card would find it there
        (`torch.nn.utils.prune.l1_unstructured` without its import) where a fresh worker has none."""
        return len(sys.modules) != self.modules

    def changed(self) -> list[str]:
        """The namespaces in which an entry that was there is now another object or gone, and the
        torch settings held in C (no namespace shows them) that differ from the worker's start."""
        now = torch_settings()
        changed = [f"torch setting {name}" for name in self.settings if now.get(name) != self.settings[name]]
        return changed + self._changed_namespaces()

    def _changed_namespaces(self) -> list[str]:
        suspects = self._moved() if self.fast else range(len(self.dicts))
        changed = [self.names[i] for i in suspects if self._differs(i)]
        if self.fast and not changed:
            self.tags = self.read_tags()  # only lazy imports or bookkeeping moved a tag: still clean
        return changed

    def _moved(self) -> list[int]:
        """The dicts whose version tag moved since it was last taken."""
        now = self.read_tags()
        if isinstance(now, list):
            return [i for i, (a, b) in enumerate(zip(now, self.tags, strict=True)) if a != b]
        return [int(i) for i in (now != self.tags).nonzero()[0]]

    def _differs(self, i: int) -> bool:
        """Whether an entry was replaced, removed or added (an added submodule or dunder is fine)."""
        now, before = self.dicts[i], self.entries[i]
        ignore = _BOOKKEEPING.get(self.names[i], ())
        for key, ident in before.items():
            value = now.get(key, _MISSING)
            if id(value) == ident or key in ignore:
                continue
            if key == "step" and self._profiled(value, ident):
                before[key] = id(value)  # torch's own first-use patch: the clean state from now on
                continue
            return True
        if self.names[i] in _STRICT:
            return len(now) != len(before)  # a variable added to the environment counts too
        added = [key for key in list(now) if key not in before]
        return any(not _harmless(key, now.get(key)) for key in added)

    def _profiled(self, value: object, ident: int) -> bool:
        """Whether `value` is torch's step-profiling wrapper (Optimizer.profile_hook_step) around the
        entry that was there: what torch does to an optimizer class the first time one is made. Its code
        is torch's and it calls the very function it replaced, so later cards see what they would anyway."""
        code = getattr(value, "__code__", None)
        if not isinstance(code, CodeType) or code is not self.profiled or "func" not in code.co_freevars:
            return False
        cell = value.__closure__[code.co_freevars.index("func")]  # type: ignore[attr-defined]
        return id(cell.cell_contents) == ident  # what it calls, not its __wrapped__ (anyone may set that)


def torch_settings() -> dict[str, object]:
    """Process-wide torch state a snippet can change without touching any Python namespace."""
    import torch

    settings: dict[str, object] = {
        "grad_enabled": torch.is_grad_enabled(),
        "inference_mode": torch.is_inference_mode_enabled(),
        "default_dtype": torch.get_default_dtype(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "anomaly_detection": torch.is_anomaly_enabled(),
        "num_threads": torch.get_num_threads(),
        "autocast_cache": torch.is_autocast_cache_enabled(),
    }
    settings.update(compat.autocast_settings())
    settings.update(compat.backend_flags())  # (reset before each job: seen here only when that failed)
    # A process group left open: the next card's init_process_group would fail.
    distributed = sys.modules.get("torch.distributed")
    open_group = distributed is not None and distributed.is_available() and distributed.is_initialized()
    settings["process_group"] = bool(open_group)
    # Global hooks (every module's forward, every optimizer's step) live in dicts no namespace replaces.
    for module, names in _GLOBAL_HOOKS:
        namespace = getattr(sys.modules.get(module), "__dict__", {})
        for name in names:
            hooks = namespace.get(name)
            settings[f"{module}.{name}"] = tuple(map(id, hooks.values())) if isinstance(hooks, dict) else None
    return settings


def _kept() -> list[tuple[object, str, object]]:
    """(owner, attribute, value) of every RESTORED entry that exists now."""
    kept = []
    for module, path in RESTORED:
        owner: object = sys.modules.get(module)
        *outer, attribute = path.split(".")
        for name in outer:
            owner = getattr(owner, name, None)
        if owner is not None and hasattr(owner, attribute):
            kept.append((owner, attribute, getattr(owner, attribute)))
    return kept


def _profiled_step_code() -> object:
    """The code object of torch's step-profiling wrapper (None where torch has none)."""
    optim = sys.modules.get("torch.optim")
    wrap = getattr(getattr(optim, "Optimizer", None), "profile_hook_step", None)
    try:
        return wrap(lambda: None).__code__ if wrap is not None else None
    except Exception:  # another torch: nothing is recognised
        return None


def _harmless(key: str, value: object) -> bool:
    return isinstance(value, ModuleType) or (key.startswith("__") and key.endswith("__"))


_MISSING = object()
_STRICT = {"os.environ"}
_OWN = {"quizgen"}  # our own modules keep per-job bookkeeping; no card code reaches them
# Entries the interpreter itself rewrites in normal use (not a card's doing).
_BOOKKEEPING: dict[str, tuple[str, ...]] = {"warnings": ("_filters_version",)}
_GLOBAL_HOOKS = (
    (
        "torch.nn.modules.module",
        (
            "_global_forward_hooks",
            "_global_forward_pre_hooks",
            "_global_backward_hooks",
            "_global_backward_pre_hooks",
            "_global_buffer_registration_hooks",
            "_global_module_registration_hooks",
            "_global_parameter_registration_hooks",
        ),
    ),
    ("torch.optim.optimizer", ("_global_optimizer_pre_hooks", "_global_optimizer_post_hooks")),
)
# Entries torch rewrites in ordinary use and never puts back, restored after every job (module, attribute
# path): a later card must not see them either (a hook handle's id counts the hooks earlier cards made).
# init_process_group leaves two globals of distributed_c10d set after destroy_process_group; a group
# left open is seen by torch_settings, and the gloo threads of one a job made end with its namespace
# (process_groups.py), so a job that made and destroyed a group leaves nothing else behind.
RESTORED = (
    ("torch.utils.hooks", "RemovableHandle.next_id"),
    ("sys", "excepthook"),  # init_process_group wraps it
    ("torch.distributed.distributed_c10d", "_backend"),
    ("torch.distributed.distributed_c10d", "_default_pg_init_method"),
)
