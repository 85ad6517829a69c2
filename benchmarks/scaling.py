"""Benchmark: streamed low-rank alignment statistics + alignf against m, beside the exact statistics where they fit.

For each m, a fresh process (so that its peak resident memory, `ru_maxrss`, is that of one run) fits a `LowRankBank`
of p = 20 Gaussian kernels (gamma = 2^t / d, t = -8..0 evenly spaced; Nystroem, rank r = 200: q <= 4020 feature
columns) and computes `lowrank_alignment_stats` (streamed over row chunks) and the alignf weights from them. The
reference measured in the same process is the BLAS floor: the time of one `S^T S` on a chunk of the same shape times
the number of chunks (the O(m q^2) flops the method cannot avoid). Where the exact (p, m, m) stack fits (m <= 4000),
another fresh process computes `alignment_stats` on it, and the table gives the relative errors of a, M and of the
alignf weights, plus the largest per-kernel relative error of M_kk over the kernels with gamma <= 2^-4 / d (whose
spectral tail allows 1e-2 at rank 200; see the chapter *Learning kernels at scale*).

Data: synthetic (x ~ N(0, I_8), y = sin(2 x_1) + x_2 x_3 + 0.1 noise) and kin8nm (8192 x 8, standardised).

A second table, per kernel: on kin8nm (m = 1500 and 4000), for the Gaussians gamma = 2^-3/d, 2^-1/d, 2^1/d at rank
r = 200, the relative error of a_k and of M_kk of the default bank (k-means landmarks, s = 4r, truncated to r (+ the mean direction)) and of
uniform landmarks without oversampling (s = r, the earlier default), beside the error of the best rank-r truncation of
each centered kernel (its top r eigenpairs, from `scipy.linalg.eigh` of the exact K_k^c). Goal: within 3x of the best,
or below 1e-3.

Run from the repository root: `nice python benchmarks/scaling.py [--sizes 1000 10000 100000 1000000]
[--per-kernel 1500 4000]`.
Writes the table to benchmarks/results/scaling.md.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # measure the checkout this script lives in
P, RANK, D = 20, 200, 8


def _data(kind, m, seed=0):
    if kind == "kin8nm":
        from sklearn.preprocessing import StandardScaler
        from mklbook.data import load_dataset
        X, y = load_dataset("kin8nm")
        if m > X.shape[0]:
            raise SystemExit(f"kin8nm has {X.shape[0]} rows; asked for {m}.")
        return StandardScaler().fit_transform(X)[:m], y[:m]
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, D))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * rng.standard_normal(m)


def _bank():
    from mklbook.kernels import gaussian_bank
    return gaussian_bank(2.0 ** np.linspace(-8, 0, P) / D)


def _maxrss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(kind, m, mode, out):
    "One measurement in this (fresh) process; writes a, M, mu and timings to `out` (.npz) and prints JSON."
    import warnings
    from mklbook.alignment import alignf_from_stats, alignment_stats
    X, y = _data(kind, m)
    base = _maxrss_mib()
    info = {"m": m, "mode": mode, "baseline_mib": base}
    if mode == "exact":
        from mklbook.kernels import KernelBank
        t0, c0 = time.perf_counter(), time.process_time()
        Ks = KernelBank(_bank()).fit_transform(X)
        a, M = alignment_stats(Ks, y)
        info["stats_s"], info["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    else:
        from mklbook.lowrank import LowRankBank, _chunk_rows, lowrank_alignment_stats
        t0, c0 = time.perf_counter(), time.process_time()
        bank = LowRankBank(_bank(), RANK, random_state=0).fit(X)
        a, M = lowrank_alignment_stats(bank, X, y)
        info["stats_s"], info["cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
        q = bank.n_columns_
        b = min(_chunk_rows(None, q), m)
        S = np.random.default_rng(1).standard_normal((b, q))
        t1 = time.perf_counter()
        S.T @ S
        info["floor_s"] = (time.perf_counter() - t1) * m / b
        t1 = time.perf_counter()
        S.T @ S                                               # best of two: the floor is a lower reference
        info["floor_s"] = min(info["floor_s"], (time.perf_counter() - t1) * m / b)
        info["q"] = q
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = alignf_from_stats(a, M, y)
    info["alignf_s"] = time.perf_counter() - t0
    info["status"] = res.status
    info["peak_mib"] = _maxrss_mib()
    np.savez(out, a=a, M=M, mu=res.weights)
    print(json.dumps(info), flush=True)


PER_KERNEL_T = (-3, -1, 1)                                     # gamma = 2^t / d: the widths of the measurement


def per_kernel(m, r=RANK):
    "Rows of the per-kernel table at m: error of a_k and M_kk, default and uniform landmarks, beside the best rank r."
    from scipy.linalg import eigh
    from mklbook.kernels import center, gaussian_bank
    from mklbook.lowrank import LowRankBank, lowrank_alignment_stats
    X, y = _data("kin8nm", m)
    yc = y - y.mean()
    bank = gaussian_bank([2.0 ** t / D for t in PER_KERNEL_T])
    fits = {}
    for name, kw in (("default", {}), ("uniform", dict(landmarks="uniform", oversampling=1))):
        t0 = time.perf_counter()
        bk = LowRankBank(bank, r, random_state=0, **kw).fit(X)
        fits[name] = lowrank_alignment_stats(bk, X, y) + (time.perf_counter() - t0,)
    rows = []
    for k, (t, kern) in enumerate(zip(PER_KERNEL_T, bank)):
        lam, U = eigh(center(kern.raw(X)))
        lam, U = lam[::-1], U[:, ::-1]
        a, M = yc @ (U * lam) @ (U.T @ yc), (lam ** 2).sum()
        best = np.array([(lam[r:] * (U[:, r:].T @ yc) ** 2).sum() / a, (lam[r:] ** 2).sum() / M])
        err = {n: np.array([1 - f[0][k] / a, 1 - f[1][k, k] / M]) for n, f in fits.items()}
        ok = bool((err["default"] <= np.maximum(3 * best, 1e-3)).all())
        rows.append([str(m), f"2^{t}/d"] + [f"{v:.1e}" for v in (best[0], err["default"][0], err["uniform"][0])]
                    + [f"{err['default'][0] / best[0]:.1f}"]
                    + [f"{v:.1e}" for v in (best[1], err["default"][1], err["uniform"][1])]
                    + [f"{err['default'][1] / best[1]:.1f}", "yes" if ok else "**no**",
                       f"{fits['default'][2]:.2f} / {fits['uniform'][2]:.2f}"])
    return rows


def run(kind, m, mode, tmp):
    out = Path(tmp) / f"{kind}_{m}_{mode}.npz"
    cmd = [sys.executable, __file__, "--child", kind, str(m), mode, str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr[-2000:]}")
    info = json.loads(r.stdout.strip().splitlines()[-1])
    return info, np.load(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000, 10000, 100000, 1000000])
    ap.add_argument("--kin8nm", type=int, nargs="*", default=[1000, 4000, 8192])
    ap.add_argument("--first", choices=["synthetic", "kin8nm"], default="kin8nm", help="which data set runs first")
    ap.add_argument("--exact-max", type=int, default=4000)
    ap.add_argument("--per-kernel", type=int, nargs="*", default=[1500, 4000], help="kin8nm sizes of the per-kernel table")
    ap.add_argument("--child", nargs=4, metavar=("DATA", "M", "MODE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, m, mode, out = args.child
        return child(kind, int(m), mode, out)
    gam = 2.0 ** np.linspace(-8, 0, P) / D
    wide = gam <= 2.0 ** -4 / D * (1 + 1e-12)
    lines = [f"## Streamed low-rank alignment statistics + alignf against m", "",
             f"p = {P} Gaussian kernels (gamma = 2^t/{D}, t in [-8, 0]), Nystroem rank r = {RANK} (q <= {P * (RANK + 1)} "
             f"columns: the wide kernels keep fewer, q in the table; k-means landmarks, s = 4r, W factored by pivoted Cholesky, truncated), default chunks; `nice`, machine shared (load average at start: "
             f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores). Wall and CPU (all threads) seconds. Peak memory: `ru_maxrss` of a fresh process "
             "per row (baseline: after imports and data). Floor: one BLAS `S^T S` of a chunk x chunks.", "",
             "| data | m | q | low-rank stats (s) | CPU s | us/row | BLAS floor (s) | ratio | alignf (s) | peak MiB (baseline) "
             "| full Phi MiB | exact stats (s) | CPU s | exact peak MiB | rel err a | rel err M | rel err mu | max rel err M_kk, wide |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(lines), flush=True)
    out = Path(__file__).parent / "results" / "scaling.md"
    out.parent.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        order = [("kin8nm", args.kin8nm), ("synthetic", args.sizes)]
        for kind, sizes in (order if args.first == "kin8nm" else order[::-1]):
            for m in sizes:
                lo, lr = run(kind, m, "lowrank", tmp)
                cells = [kind, str(m), str(lo["q"]), f"{lo['stats_s']:.2f}", f"{lo['cpu_s']:.1f}", f"{1e6 * lo['stats_s'] / m:.0f}", f"{lo['floor_s']:.2f}",
                         f"{lo['stats_s'] / lo['floor_s']:.2f}", f"{lo['alignf_s']:.4f}",
                         f"{lo['peak_mib']:.0f} ({lo['baseline_mib']:.0f})", f"{m * lo['q'] * 8 / 2**20:.0f}"]
                if m <= args.exact_max:
                    ex, xr = run(kind, m, "exact", tmp)
                    ea = np.linalg.norm(lr["a"] - xr["a"]) / np.linalg.norm(xr["a"])
                    eM = np.linalg.norm(lr["M"] - xr["M"]) / np.linalg.norm(xr["M"])
                    emu = np.linalg.norm(lr["mu"] - xr["mu"]) / np.linalg.norm(xr["mu"])
                    dk = np.abs(1 - np.diag(lr["M"]) / np.diag(xr["M"]))[wide].max()
                    cells += [f"{ex['stats_s']:.2f}", f"{ex['cpu_s']:.1f}", f"{ex['peak_mib']:.0f}", f"{ea:.1e}", f"{eM:.1e}", f"{emu:.1e}",
                              f"{dk:.1e}"]
                else:
                    cells += ["–"] * 7
                lines.append("| " + " | ".join(cells) + " |")
                print(lines[-1], flush=True)
                out.write_text("\n".join(lines) + "\n")          # after every row: a partial run keeps its rows
    if args.per_kernel:
        lines += ["", f"## Per kernel: error of the low-rank statistics beside the best rank-{RANK} truncation", "",
                  f"kin8nm (standardised), Gaussians gamma = 2^t/{D}, rank r = {RANK}. Relative error 1 - (low rank)/(exact) "
                  "of a_k and M_kk; best: the top-r eigenpairs of the exact centered kernel. Default: k-means landmarks, "
                  "s = 4r, truncated to r (+ the mean direction); uniform: s = r uniform landmarks (the earlier default). Goal: default within 3x "
                  "of the best, or below 1e-3. Fit seconds include the statistics (both banks, same process).", "",
                  "| m | gamma | a_k: best | default | uniform | default/best | M_kk: best | default | uniform | default/best "
                  "| goal met | fit s (default / uniform) |",
                  "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
        print("\n".join(lines[-7:]), flush=True)
        for m in args.per_kernel:
            for row in per_kernel(m):
                lines.append("| " + " | ".join(row) + " |")
                print(lines[-1], flush=True)
            out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
