"""Errors raised by older torch releases without the C++ stack trace nobody reads.

Until torch made it lazy, every error torch raised from C++ (a `c10::Error`: a backward through a freed
graph, a shape that does not fit) fetched and symbolized the C++ stack the moment it was made, for
`what()`. Looking up some 40 frames' symbols in libtorch's table costs 6-7 ms on torch 1.13, against
30-50 us for the rest of such an error: an order search on 1.13 that meets a freed graph in thousands
of candidates spent 60% of its time there. Python never shows that trace (torch only adds it to the
message under TORCH_SHOW_CPP_STACKTRACES, which the pool's environment, built from nothing, never has),
so the worker puts in torch's fetcher one that returns an empty trace: the same errors, the same
messages, without the lookup.

A release whose fetcher returns a lazy trace (2.13: it symbolizes only when asked) is left alone, as is
one whose library does not have the symbols looked for: nothing changes there but the cost.
"""

from __future__ import annotations

import contextlib
import ctypes
import os

# c10::SetStackTraceFetcher(std::function<std::string()>) and std::string's default constructor, in
# each of libstdc++'s two ABIs (torch's wheels used the old one up to 2.x).
_EAGER = (
    ("_ZN3c1020SetStackTraceFetcherESt8functionIFSsvEE", "_ZNSsC1Ev"),
    (
        "_ZN3c1020SetStackTraceFetcherESt8functionIFNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEvEE",
        "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEC1Ev",
    ),
)
# The lazy fetcher's setter: where it exists, torch symbolizes only when a trace is read.
_LAZY = "_ZN3c1020SetStackTraceFetcherESt8functionIFSt10shared_ptrIKNS_9LazyValue"

_INVOKE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


class _Function(ctypes.Structure):
    """libstdc++'s std::function: the stored functor (none here), its manager, its invoker."""

    _fields_ = [("functor", ctypes.c_void_p * 2), ("manager", ctypes.c_void_p), ("invoker", _INVOKE)]


_installed: tuple[_Function, object] | None = None  # for the life of the process: torch calls them


def _library(torch_dir: str) -> ctypes.CDLL | None:
    with contextlib.suppress(OSError):
        return ctypes.CDLL(os.path.join(torch_dir, "lib", "libc10.so"))
    return None


def _has_lazy(c10: ctypes.CDLL) -> bool:
    """Whether this c10 has the lazy fetcher's setter (in either ABI)."""
    tails = ("INSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEEEEvEE", "ISsEEEvEE")
    return any(hasattr(c10, _LAZY + tail) for tail in tails)


def skip_cpp_traces() -> bool:
    """In the zygote, before any snippet: torch's errors made without symbolizing their C++ stack, where
    this torch does that eagerly. Whether it was changed."""
    global _installed
    import torch

    c10 = _library(os.path.dirname(torch.__file__))
    if _installed is not None or c10 is None or _has_lazy(c10):
        return False
    found = [(getattr(c10, setter), name) for setter, name in _EAGER if hasattr(c10, setter)]
    if not found:
        return False
    setter, constructor_name = found[0]
    try:
        constructor = getattr(ctypes.CDLL("libstdc++.so.6"), constructor_name)
    except (OSError, AttributeError):
        return False
    constructor.argtypes, constructor.restype = [ctypes.c_void_p], None

    def invoke(result: int, functor: int) -> int:
        constructor(result)  # the empty string, made in the place the caller gave (and returned)
        return result

    invoker = _INVOKE(invoke)
    # The manager copies and destroys the functor (there is none), and is called as the process exits,
    # after Python is gone: a C function that touches neither its arguments nor memory (getpid: its
    # result is ignored), not a Python one.
    manager = ctypes.cast(ctypes.CDLL(None).getpid, ctypes.c_void_p).value
    function = _Function((0, 0), manager, invoker)
    setter.argtypes, setter.restype = [ctypes.POINTER(_Function)], None
    setter(ctypes.byref(function))  # (a std::function is passed by value: by a pointer to it)
    _installed = (function, invoker)
    return True
