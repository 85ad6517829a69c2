"""Timing helpers shared by the benchmark scripts (run them from the repository root or this folder)."""
import time


def best_of(f, repeat: int) -> float:
    "The smallest wall-clock time of `repeat` calls of `f()`: the least noisy estimate on a shared machine."
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def timed(f):
    "`(f(), seconds)`: one call of `f` and its wall-clock time."
    t0 = time.perf_counter()
    out = f()
    return out, time.perf_counter() - t0
