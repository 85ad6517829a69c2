"""Benchmark: exact alignment statistics streamed from X (`StreamedBank`) against m, beside the floor.

Each row runs in a fresh process (so that `ru_maxrss` is the peak of one run): p = 20 Gaussian kernels on
x ~ N(0, I_8), y = sin(2 x_1) + x_2 x_3 + noise, `StreamedBank(normalize="trace", center=True).fit(X, y)` on all cores.
Two banks: "half-octave" (gamma = 2^t / 8, t = -8, -7.5, ..., 1.5: two chains of doubling widths, so 2 exps and 18
squarings per entry) and "generic" (t evenly spaced in [-8, 0]: 20 exps per entry).

The floor, measured in the same process: p m^2 / 2 kernel evaluations at the single-core rate of `np.exp` on one tile,
plus p^2 m^2 / 2 multiply-adds at the single-core rate of the tile's `syrk`, divided by the cores used. It is the cost of
any exact method that evaluates every kernel entry once (symmetry used) and forms T; the ratio is time / floor.

Run from the repository root: `nice python benchmarks/streaming.py [--sizes 10000 30000 100000]`.
Writes the table to benchmarks/results/streaming.md.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # measure the checkout this script lives in
P, D = 20, 8
BANKS = {"half-octave": 2.0 ** (np.arange(-16, 4) / 2) / D, "generic": 2.0 ** np.linspace(-8, 0, P) / D}


def _rates(tile):
    "Single-core seconds per exp and per syrk multiply-add, on one (p, b, b) tile (best of 3)."
    from threadpoolctl import threadpool_limits
    rng = np.random.default_rng(0)
    Dm = rng.random((tile, tile))
    V = rng.random((P, tile * tile))
    best_e = best_s = np.inf
    with threadpool_limits(1, user_api="blas"):
        for _ in range(3):
            t0 = time.perf_counter()
            np.exp(-0.1 * Dm)
            best_e = min(best_e, (time.perf_counter() - t0) / Dm.size)
            t0 = time.perf_counter()
            V @ V.T
            best_s = min(best_s, (time.perf_counter() - t0) / (P * P * tile * tile))
    return best_e, best_s


def child(bank, m):
    from mklbook.kernels import gaussian_bank
    from mklbook.streaming import StreamedBank, _default_tile, _n_threads
    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, D))
    y = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    tile, cores = _default_tile(P), _n_threads(None)
    t_exp, t_madd = _rates(tile)
    t0, c0 = time.perf_counter(), time.process_time()
    sb = StreamedBank(gaussian_bank(BANKS[bank]), normalize="trace", center=True, progress=False).fit(X, y)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    floor = (P * m * m / 2 * t_exp + P * P * m * m / 2 * t_madd) / cores
    print(json.dumps(dict(bank=bank, m=m, wall=wall, cpu=cpu, floor=floor, exp_ns=1e9 * t_exp,
                          madd_ns=1e9 * t_madd, cores=cores, tile=tile, base=base,
                          peak=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                          finite=bool(np.isfinite(sb.M_).all() and np.isfinite(sb.a_).all()))), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10000, 30000, 100000])
    ap.add_argument("--generic", type=int, nargs="*", default=[10000, 30000])
    ap.add_argument("--child", nargs=2, metavar=("BANK", "M"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child[0], int(args.child[1]))
    lines = ["## Exact alignment statistics streamed from X against m", "",
             f"p = {P} Gaussian kernels, d = {D}, `StreamedBank(normalize='trace', center=True).fit(X, y)`, threads on all "
             f"cores (load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores). Floor: p m^2/2 exps at "
             "the measured single-core exp rate + p^2 m^2/2 multiply-adds at the measured single-core syrk rate, "
             "divided by the cores. Peak: `ru_maxrss` of a fresh process (baseline after imports and data).", "",
             "| bank | m | wall (s) | CPU (s) | floor (s) | ratio | exp ns | madd ns | peak MiB (baseline) | stack GiB |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    for bank, sizes in (("half-octave", args.sizes), ("generic", args.generic)):
        for m in sizes:
            r = subprocess.run([sys.executable, __file__, "--child", bank, str(m)], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(r.stderr[-2000:])
            i = json.loads(r.stdout.strip().splitlines()[-1])
            row = (f"| {bank} | {m} | {i['wall']:.1f} | {i['cpu']:.1f} | {i['floor']:.1f} | {i['wall'] / i['floor']:.2f} "
                   f"| {i['exp_ns']:.2f} | {i['madd_ns']:.3f} | {i['peak']:.0f} ({i['base']:.0f}) | {P * m * m * 8 / 2**30:.0f} |")
            lines.append(row)
            print(row, flush=True)
    out = Path(__file__).parent / "results" / "streaming.md"
    out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
