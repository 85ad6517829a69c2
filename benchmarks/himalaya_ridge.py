"""Benchmark: multiple-kernel ridge regression against himalaya's `MultipleKernelRidgeCV`, side by side.

The user's alternative for multiple-kernel ridge is himalaya (Dupre la Tour et al., 2022), which searches the kernel
weights by random search with cross-validation. Both get the same data and the same kernels, one after the other in
this process:

* data: kin8nm (registered, 8 192 x 8, regression), m training rows and `--n-test` held-out rows (seed 0);
* kernels: the book's default bank, 7 Gaussians exp(-2^k |x - z|^2 / d), k = -3..3, on features standardised with the
  training statistics, centred and at trace one (`KernelBank(default_bank(X), normalize="trace", center=True)`),
  computed once and given to both as precomputed stacks;
* himalaya: `MultipleKernelRidgeCV(kernels="precomputed", solver="random_search", solver_params={"n_iter": N,
  "alphas": logspace(-5, 5, 11)})` (its documented default search, 5-fold CV), N = 20 draws;
* mklbook: `AlignMKL(estimator=KernelRidge(kernel="precomputed"))` (alignf weights, one ridge at alpha = 1); the same
  with `KernelRidgeCV` (alpha among the same 11 values by exact leave-one-out, one eigendecomposition); the same with
  alpha by 5-fold `GridSearchCV` (the naive way: the estimator refitted 55 times); `AlignmentKRR()` and `L2KRRMKL()`;
  each on raw features (they build the same bank themselves; the time includes it).

Prints fit seconds and test R^2 for each, and the ratio of himalaya's time to each method's. Run from the repository
root: `MKLBOOK_DATA=../shared/datasets python benchmarks/himalaya_ridge.py [--m 1000 3000]`; needs `pip install himalaya`
(not a dependency of mklbook). Writes benchmarks/results/himalaya_ridge.md.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def r2(pred, y):
    return float(1 - np.mean((pred - y) ** 2) / np.var(y))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--m", type=int, nargs="+", default=[1000])
    ap.add_argument("--n-test", type=int, default=2000)
    ap.add_argument("--n-iter", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "himalaya_ridge.md"))
    args = ap.parse_args()
    from himalaya.kernel_ridge import MultipleKernelRidgeCV
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.model_selection import GridSearchCV, train_test_split
    from mklbook.alignment import AlignMKL, AlignmentKRR
    from mklbook.baselines import L2KRRMKL
    from mklbook.data import load_dataset
    from mklbook.estimators import KernelRidgeCV
    from mklbook.kernels import KernelBank, default_bank
    X, y = load_dataset("kin8nm")
    alphas = np.logspace(-5, 5, 11)
    lines = ["| m | method | fit s | test R² | himalaya's time / this |", "|---:|---|---:|---:|---:|"]
    for m in args.m:
        Xtr, Xte, ytr, yte = train_test_split(X, y, train_size=m, random_state=0)
        Xte, yte = Xte[:args.n_test], yte[:args.n_test]
        rows = []
        t0 = time.perf_counter()
        bank = KernelBank(default_bank(Xtr), normalize="trace", center=True)
        Ks, Kt = bank.fit_transform(Xtr), None
        Kt = bank.transform(Xte)
        t_bank = time.perf_counter() - t0
        t0 = time.perf_counter()
        hm = MultipleKernelRidgeCV(kernels="precomputed", solver="random_search",
                                   solver_params={"n_iter": args.n_iter, "alphas": alphas, "progress_bar": False},
                                   random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hm.fit(Ks, ytr - ytr.mean())
        t_hm = time.perf_counter() - t0 + t_bank
        rows.append((f"himalaya MultipleKernelRidgeCV (random search, {args.n_iter} draws)", t_hm,
                     r2(np.asarray(hm.predict(Kt)) + ytr.mean(), yte)))
        del Ks, Kt
        methods = {
            "AlignMKL + KernelRidge (alpha = 1)": lambda: AlignMKL(estimator=KernelRidge(kernel="precomputed")),
            "AlignMKL + KernelRidgeCV (alpha by exact leave-one-out)": lambda: AlignMKL(
                estimator=KernelRidgeCV(alphas=tuple(alphas))),
            "AlignMKL + KernelRidge (alpha by 5-fold GridSearchCV)": lambda: GridSearchCV(
                AlignMKL(estimator=KernelRidge(kernel="precomputed")),
                {"estimator__alpha": list(alphas)}, cv=5, scoring="r2"),
            "AlignmentKRR": AlignmentKRR,
            "L2KRRMKL": L2KRRMKL,
        }
        for name, make in methods.items():
            t0 = time.perf_counter()
            est = make().fit(Xtr, ytr)
            rows.append((name, time.perf_counter() - t0, r2(est.predict(Xte), yte)))
        for name, t, score in rows:
            lines.append(f"| {m} | {name} | {t:.2f} | {score:.3f} | {t_hm / t:.1f} |")
            print(lines[-1], flush=True)
    head = (f"# Multiple-kernel ridge: mklbook against himalaya\n\nkin8nm, {args.n_test} test rows, the 7 Gaussian kernels "
            "of the default bank (centred, trace one), himalaya's time includes building them.\n\n")
    Path(args.out).write_text(head + "\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
