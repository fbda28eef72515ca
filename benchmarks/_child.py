"""Child process for ``rss`` workloads: one variant, one size, one loop; prints one JSON line.

Usage: ``python -m benchmarks._child MODULE WORKLOAD VARIANT LOOP N``.

The peak is read from ``/proc/self/status`` (``VmHWM``) after resetting it through
``/proc/self/clear_refs``, so the figure covers the measured run only. Where that is not
available (not Linux), ``ru_maxrss`` after a tiny warm-up serves as both baseline and peak source.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import json
import resource
import sys
import time
from collections.abc import Sequence

from benchmarks._harness import Workload, loop_factory

_WARMUP_N = 200


def _status_kib(field: str) -> int | None:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")
    except OSError:
        return False
    return True


def _maxrss_kib() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def main(argv: Sequence[str]) -> int:
    """Measure one point and print ``{"base_mib", "peak_mib", "seconds"}``."""
    module_name, key, variant_name, loop, n_text = argv
    n = int(n_text)
    module = importlib.import_module(module_name)
    workloads: Sequence[Workload] = module.WORKLOADS
    workload = next(w for w in workloads if w.key == key)
    variant = workload.variant(variant_name)
    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        runner.run(variant.run(_WARMUP_N))  # lazy imports and first-use allocations
        gc.collect()
        exact = _reset_peak() and _status_kib("VmRSS") is not None
        base = _status_kib("VmRSS") if exact else _maxrss_kib()
        start = time.perf_counter()
        result: object = runner.run(variant.run(n))
        seconds = time.perf_counter() - start
        peak = _status_kib("VmHWM") if exact else _maxrss_kib()
    if result != workload.expected(n):
        print(f"wrong result: {result!r}", file=sys.stderr)
        return 1
    assert base is not None
    assert peak is not None
    print(json.dumps({"base_mib": base / 1024, "peak_mib": peak / 1024, "seconds": seconds}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
