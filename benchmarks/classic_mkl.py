"""Benchmark: the classic MKL methods of chapter 14 against L1-MKL on the same kernel stacks.

Data: the training half (random, seed 0) of each of `--sets` (default: sonar, ionosphere, liver-disorders), features in
[-1, 1], Liu et al. 2017's 41-kernel bank (Gaussian gamma = 2^-10..2^10, polynomial d = 1..20), each kernel at trace m: the
stacks of `benchmarks/pep.py` and of Table 1. C = 1 throughout.

* L1-MKL (`mklbook.baselines.l1_mkl`, SILP), the reference, relative duality gap 1e-4;
* Lp-norm MKL (`lp_mkl`) at p = 1 (the same problem as L1-MKL) with the log-space over-relaxed update and with Kloft's
  plain alternation, and at p = 2, gap 1e-4;
* GMKL, sum of kernels (`gmkl`, sigma = 1): l1 by the level method with Newton steps (the default), by Kelley's cutting
  planes and by the paper's projected gradient, l2 by projected gradient, gap 1e-4;
* NLMKL (`nlmkl`, KRR on +-1 targets, lambda = Lambda = 1, mu0 = 0), p = 1 and 2, projected-gradient residual 1e-4
  (a stationary point: not convex);
* two-layer MKL (`two_layer_mkl`, the book's reading, R = 1, p = 1) by projected quasi-Newton (the default) and by
  spectral projected gradient, residual 1e-4 (stationary points);
* IKL (`ikl`: IFKL's column generation without the PEP term) from the raw training inputs, violation tol 1e-3 (this
  one builds its own kernels, which the stack-based rows were given).

Reported: iterations, kernel-machine solves (SVM or KRR factorisations), status, certificate (relative gap, or
residual / violation), objective, seconds and the time ratio to L1-MKL measured in this process, one run each (the
solvers are deterministic; the machine is shared, so compare ratios, not seconds). The script asserts that Lp-MKL at
p = 1 agrees with L1-MKL and GMKL's three l1 solvers with each other, within their certificates.

`--estimators BEFORE.json AFTER.json` adds the estimators' rows of `benchmarks/estimators.py` (defaults, synthetic data,
each row in a fresh process, fit time beside the floor: the default stack and one SVM on its sum) from two of its JSON
stores, e.g. one written on the commit before a change and one after it:
`OMP_NUM_THREADS=1 python benchmarks/estimators.py --sizes 1000 4000 --only LpMKL GMKL NLMKL TwoLayerMKL --data synthetic
--out /tmp/after.md` (the store is /tmp/after.json).
Writes benchmarks/results/classic_mkl.md.
"""
import argparse
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _pep_data import training_half  # noqa: E402
from _timing import timed  # noqa: E402
from mklbook.baselines import l1_mkl  # noqa: E402
from mklbook.classic_mkl import gmkl, ikl, lp_mkl, nlmkl, two_layer_mkl  # noqa: E402
from mklbook.protocol import markdown_table  # noqa: E402

HEAD = ["set", "m", "method", "iterations", "solves", "status", "certificate", "objective", "seconds", "time / L1-MKL"]


def methods(Ktr, Xtr, ytr):
    "(label, thunk) of every run on one training half; the first is the reference."
    return [
        ("L1-MKL (SILP)", lambda: l1_mkl(Ktr, ytr, C=1.0, tol=1e-4)),
        ("Lp-MKL q=1, over-relaxed", lambda: lp_mkl(Ktr, ytr, q=1, tol=1e-4, max_iter=5000)),
        ("Lp-MKL q=1, plain (Kloft)", lambda: lp_mkl(Ktr, ytr, q=1, tol=1e-4, accelerate=False, max_iter=5000)),
        ("Lp-MKL q=2 (GLMKL)", lambda: lp_mkl(Ktr, ytr, q=2, tol=1e-4, max_iter=5000)),
        ("GMKL l1, level + Newton", lambda: gmkl(Ktr, ytr, reg="l1", method="level", tol=1e-4)),
        ("GMKL l1, cutting planes", lambda: gmkl(Ktr, ytr, reg="l1", method="silp", tol=1e-4)),
        ("GMKL l1, projected gradient", lambda: gmkl(Ktr, ytr, reg="l1", method="projected-gradient", tol=1e-4,
                                                     max_iter=2000)),
        ("GMKL l2, projected gradient", lambda: gmkl(Ktr, ytr, reg="l2", tol=1e-4, max_iter=2000)),
        ("NLMKL q=1", lambda: nlmkl(Ktr, ytr, q=1, tol=1e-4, max_iter=2000)),
        ("NLMKL q=2", lambda: nlmkl(Ktr, ytr, q=2, tol=1e-4, max_iter=2000)),
        ("two-layer MKL (R=1, p=1), quasi-Newton", lambda: two_layer_mkl(Ktr, ytr, tol=1e-4, max_iter=2000)),
        ("two-layer MKL (R=1, p=1), projected gradient", lambda: two_layer_mkl(Ktr, ytr, tol=1e-4, max_iter=2000,
                                                                             method="projected-gradient")),
        ("IKL (raw inputs, column generation)", lambda: ikl(Xtr, ytr)),
    ]


def estimators_table(before_json, after_json):
    "The rows of two `benchmarks/estimators.py` stores side by side: fit seconds and the ratio to the floor."
    import json
    rows = []
    load = lambda f: {(r["estimator"], r["data"], r["m"]): r for r in json.loads(Path(f).read_text())["rows"]}
    before, after = load(before_json), load(after_json)
    fmt = lambda r: ("–", "–", r.get("status", "?")) if r is None or r.get("status") != "ok" else \
        (f"{r['fit_s']:.2f}", f"{r['fit_s'] / r['floor_s']:.1f}", f"{r['peak_mib']:.0f}")
    for key in sorted(after, key=lambda k: (k[2], k[0])):
        b, a = fmt(before.get(key)), fmt(after[key])
        rows.append([key[0], key[1], key[2], *b, *a])
    head = ["estimator", "data", "m", "fit s before", "x floor before", "peak MiB before", "fit s after",
            "x floor after", "peak MiB after"]
    return ("## The estimators with their defaults, before and after (`benchmarks/estimators.py`)\n\n"
            + markdown_table(head, rows) + "\n\nEach row in a fresh process (`OMP_NUM_THREADS=1`); x floor: fit time over the "
            "time, in the same process, of building the default stack and training one SVM (KernelRidge for NLMKL) on "
            "its sum. The two columns ran at different times on a shared machine: compare the ratios.\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="sonar,ionosphere,liver-disorders")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "classic_mkl.md"))
    ap.add_argument("--estimators", nargs=2, metavar=("BEFORE_JSON", "AFTER_JSON"), default=None,
                    help="two JSON stores of benchmarks/estimators.py to report before and after")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    for name in args.sets.split(","):
        Xtr, ytr, Ktr = training_half(name)
        m = len(ytr)
        runs = {}
        for label, thunk in methods(Ktr, Xtr, ytr):
            r, t = timed(thunk)
            runs[label] = (r, t)
            t_ref = runs["L1-MKL (SILP)"][1]
            rows.append([name, m, label, r.n_iter if not hasattr(r, "n_outer") else r.n_outer,
                         getattr(r, "n_solves", "–"), r.status, f"{r.gap:.1e}", f"{r.objective:.6g}", f"{t:.2f}",
                         f"{t / t_ref:.2f}"])
            print(markdown_table(HEAD, rows[-1:]).splitlines()[-1], flush=True)
        ref, a = runs["L1-MKL (SILP)"][0], runs["Lp-MKL q=1, over-relaxed"][0]
        assert abs(a.objective - ref.objective) <= (a.gap + ref.gap) * max(1.0, abs(ref.objective)), name
        gm = [runs[k][0] for k in ("GMKL l1, level + Newton", "GMKL l1, cutting planes", "GMKL l1, projected gradient")]
        gm = [r for r in gm if r.status == "optimal"]
        for r in gm[1:]:
            assert abs(r.objective - gm[0].objective) <= (r.gap + gm[0].gap) * max(1.0, abs(gm[0].objective)), name
    text = ("# Classic MKL methods against L1-MKL (41-kernel bank, C = 1, training half of one split)\n\n"
            + markdown_table(HEAD, rows) + "\n\nsolves: SVM solves (NLMKL: KRR factorisations); certificate: relative "
            "duality gap (convex methods), projected-gradient residual (NLMKL, two-layer MKL: stationary points) or "
            "largest relative violation (IKL, local in gamma).\n")
    if args.estimators:
        text += "\n" + estimators_table(*args.estimators)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
