"""The zygote's warm memory collapsed into huge pages (huge_pages.py)."""

from __future__ import annotations

import mmap
from pathlib import Path

import pytest

from quizgen.execution.worker import huge_pages


def _huge_kb() -> int:
    with open("/proc/self/smaps_rollup") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("AnonHugePages:"))


def test_private_anonymous_memory_is_collapsed_in_place_with_its_contents() -> None:
    region = mmap.mmap(-1, 8 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    pattern = bytes(range(256)) * 16
    for at in range(0, len(region), 4096):
        region[at : at + 4096] = pattern
    before = _huge_kb()
    collapsed = huge_pages.collapse()
    if collapsed == 0:
        pytest.skip("this kernel collapses no memory into huge pages (MADV_COLLAPSE: Linux 6.1)")
    assert collapsed >= 6 << 20  # at least this region's aligned part
    assert _huge_kb() >= before + (4 << 10)
    assert all(region[at : at + 4096] == pattern for at in range(0, len(region), 4096))


def test_nothing_is_collapsed_where_no_anonymous_memory_is_listed(tmp_path: Path) -> None:
    maps = tmp_path / "maps"
    maps.write_text(
        "7f0000000000-7f0000800000 r-xp 00000000 08:01 42 /usr/lib/libtorch_cpu.so\n"
        "7f0000800000-7f0001000000 rw-p 00000000 08:01 42 /usr/lib/libtorch_cpu.so\n"
        "7ffd00000000-7ffd00800000 rw-p 00000000 00:00 0 [stack]\n"
    )
    assert huge_pages.collapse(str(maps)) == 0
    assert huge_pages.collapse(str(tmp_path / "missing")) == 0


def test_a_range_that_cannot_be_collapsed_does_not_stop_the_ones_after_it(tmp_path: Path) -> None:
    """A thread's stack is marked no-huge-page (EINVAL): stopping there left ~80 MB of the zygote behind."""
    import ctypes

    def region(size: int) -> tuple[mmap.mmap, int]:
        m = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        for at in range(0, size, 4096):
            m[at] = 1
        return m, ctypes.addressof(ctypes.c_char.from_buffer(m))

    def listed(*starts: int) -> str:
        maps = tmp_path / "maps"
        maps.write_text("".join(f"{at:x}-{at + (8 << 20):x} rw-p 00000000 00:00 0\n" for at in starts))
        return str(maps)

    probe, at = region(8 << 20)
    if huge_pages.collapse(listed(at)) == 0:
        pytest.skip("this kernel collapses no memory into huge pages (MADV_COLLAPSE: Linux 6.1)")
    (refused, start), (taken, after) = region(8 << 20), region(8 << 20)
    assert ctypes.CDLL(None).madvise(ctypes.c_void_p(start), ctypes.c_size_t(8 << 20), 15) == 0  # NOHUGEPAGE
    collapsed = huge_pages.collapse(listed(start, after))
    assert 6 << 20 <= collapsed <= 8 << 20  # the second region's aligned part, none of the first
    for m in (probe, refused, taken):
        m.close()
