"""Callgrind client requests from pure Python, and the reading of callgrind's dumps
(stdlib only: this file runs inside task containers next to ``fc_bench.py``).

Why this shape: callgrind's client requests (start/stop instrumentation, zero, dump) are
a magic instruction sequence that C code emits through ``valgrind/callgrind.h``'s inline
assembly. The task images have no compiler and no maintained package with those hooks
(pytest-codspeed's are a compiled extension that is not in the images and not installed
here), and ``--toggle-collect=<function>`` needs a C function that brackets exactly the
measured call, which a Python call does not have. So the sequence is written here as the
eleven x86-64 instructions ``valgrind.h`` expands to, placed in an executable anonymous
page (``mmap``) and called through ``ctypes``. Outside valgrind the sequence is a no-op
that returns the default (0), as the C macro does.

The cycle estimate is the usual one for a cache-simulating run (CodSpeed, iai,
rustls' ci-bench): ``Ir + 10 * L1 misses + 100 * last-level misses``, where L1 misses are
instruction and data (read and write) misses of the first level and LL misses those of the
last level.
"""

from __future__ import annotations

import ctypes
import mmap
import platform
import re
from pathlib import Path
from typing import Any

_TOOL_BASE = (ord("C") << 24) | (ord("T") << 16)  # VG_USERREQ_TOOL_BASE('C','T')
DUMP_STATS, ZERO_STATS, TOGGLE_COLLECT, DUMP_STATS_AT, START_INSTRUMENTATION, \
    STOP_INSTRUMENTATION = range(_TOOL_BASE, _TOOL_BASE + 6)
RUNNING_ON_VALGRIND = 0x1001  # core request: how many valgrinds we run under (0 = none)

# uint64 request(uint64 *args): rax = args, rdx = default 0, the amd64 special-instruction
# preamble (rol rdi by 3, 13, 61, 51: 128 bits, rdi unchanged), xchg rbx,rbx, return rdx.
_AMD64 = bytes.fromhex(
    "4889f8"      # mov rax, rdi
    "31d2"        # xor edx, edx
    "48c1c703"    # rol rdi, 3
    "48c1c70d"    # rol rdi, 13
    "48c1c73d"    # rol rdi, 61
    "48c1c733"    # rol rdi, 51
    "4887db"      # xchg rbx, rbx  (the client request: rdx = request(rax))
    "4889d0"      # mov rax, rdx
    "c3"          # ret
)

#: event names callgrind writes with --cache-sim=yes
EVENTS = ("Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw")
L1_MISS_COST, LL_MISS_COST = 10, 100
#: simulated caches (size, associativity, line bytes): 32 KiB 8-way L1s and a 32 MiB
#: 16-way last level, a common server core's, the same on every host
CACHE = {"I1": "32768,8,64", "D1": "32768,8,64", "LL": "33554432,16,64"}


class Requests:
    """The client-request trampoline (one executable page, kept for the process)."""

    def __init__(self) -> None:
        if platform.machine() not in ("x86_64", "AMD64"):
            raise RuntimeError(f"callgrind client requests: no shim for {platform.machine()}")
        self._page = mmap.mmap(-1, mmap.PAGESIZE,
                               prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
        self._page.write(_AMD64)
        address = ctypes.addressof(ctypes.c_char.from_buffer(self._page))
        self._fn = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p)(address)
        self._args = (ctypes.c_uint64 * 6)()
        self._keep: list[Any] = []

    def __call__(self, request: int, arg1: int = 0) -> int:
        self._args[0], self._args[1] = request, arg1
        return int(self._fn(ctypes.addressof(self._args)))

    def running_on_valgrind(self) -> bool:
        return self(RUNNING_ON_VALGRIND) > 0

    def start(self) -> None:
        """Instrumentation on (the simulated caches start cold, the same every time)."""
        self(START_INSTRUMENTATION)

    def stop(self) -> None:
        self(STOP_INSTRUMENTATION)

    def zero(self) -> None:
        self(ZERO_STATS)

    def dump(self, label: str) -> None:
        """Write the counts since the last zero/dump to a new dump file, labelled."""
        text = ctypes.create_string_buffer(label.encode("utf-8", "replace")[:200])
        self(DUMP_STATS_AT, ctypes.addressof(text))


def valgrind_prefix(out_file: str, valgrind: str = "valgrind") -> list[str]:
    """The command prefix of a cycles run: cache simulation on with a fixed cache geometry
    (callgrind otherwise copies the host's, and the estimate would change with the
    machine), instrumentation and collection off at start (the measured calls switch them
    on), one dump file per thread."""
    return [valgrind, "--tool=callgrind", "--cache-sim=yes", "--instr-atstart=no",
            "--collect-atstart=no", f"--I1={CACHE['I1']}", f"--D1={CACHE['D1']}",
            f"--LL={CACHE['LL']}",
            "--separate-threads=yes", "--dump-instr=no", "--compress-strings=no",
            "--compress-pos=no", f"--callgrind-out-file={out_file}", "-q"]


def read_totals(path: Path) -> dict[str, int]:
    """Event totals of one dump file (its ``events:`` and ``totals:``/``summary:`` lines)."""
    names: list[str] = []
    totals: list[int] | None = None
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("events:"):
            names = line.split()[1:]
        elif line.startswith(("totals:", "summary:")):
            totals = [int(x) for x in line.split()[1:]]
    if totals is None:
        raise ValueError(f"{path}: no totals line")
    out = {n: 0 for n in EVENTS}
    out.update(dict(zip(names, totals, strict=False)))
    return out


def cycles(events: dict[str, int]) -> int:
    """``Ir + 10 * L1 misses + 100 * LL misses`` (instruction and data misses)."""
    l1 = events["I1mr"] + events["D1mr"] + events["D1mw"]
    ll = events["ILmr"] + events["DLmr"] + events["DLmw"]
    return events["Ir"] + L1_MISS_COST * l1 + LL_MISS_COST * ll


_THREAD_SUFFIX = re.compile(r"-(\d+)$")


def dump_files(out_file: str, pid: int) -> list[Path]:
    """The dump files a process wrote under ``--callgrind-out-file=OUT.%p`` (one per thread
    and dump: ``OUT.<pid>.<n>-<tid>``; ``OUT.<pid>-<tid>`` for the final dump at exit)."""
    base = Path(out_file.replace("%p", str(pid)))
    return sorted(p for p in base.parent.glob(base.name + "*") if p.is_file())


def thread_of(path: Path) -> int:
    """The thread number of a per-thread dump file (1 = the process's first thread)."""
    match = _THREAD_SUFFIX.search(path.name)
    return int(match.group(1)) if match else 1
