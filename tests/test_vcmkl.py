"""Tests of mklbook.vcmkl: certificates, shared objective, bad input, sklearn conventions."""
import os
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import parametrize_with_checks

os.environ.setdefault("OMP_NUM_THREADS", "1")
from mklbook.kernels import Linear  # noqa: E402
from mklbook.vcmkl import (VCMKLClassifier, _Evaluator, kmeans_lambda, make_problem, opt1_objective,  # noqa: E402
                           pddp_bounds, project_lambda, solve_inner, solve_vcmkl, veto_consensus)


def toy(seed=0, n_pos=25, n_per=20, k=3):
    r = np.random.default_rng(seed)
    ang = 2 * np.pi * np.arange(k) / k
    Xn = np.vstack([3 * np.r_[np.cos(a), np.sin(a)] + r.normal(0, 0.7, (n_per, 2)) for a in ang])
    X = np.vstack([r.normal(0, 0.7, (n_pos, 2)), Xn])
    return X, np.r_[np.ones(n_pos), -np.ones(k * n_per)]



@pytest.mark.parametrize("solver", ["pddp", "am", "cccp"])
def test_solvers_share_objective_and_certify(solver):
    X, y = toy()
    Ks = np.stack([X @ X.T + 1.0] * 3)
    Ks0 = Ks.copy()
    r = solve_vcmkl(Ks, y, nu=0.1, solver=solver, max_iter=20, warn=False)
    assert np.array_equal(Ks, Ks0)                                   # input untouched
    prob = make_problem(Ks, y, 0.1)
    W = [prob.Phi[m].T @ (Ks[m] @ r.coef[:, m]) * 0 + np.linalg.lstsq(prob.Phi[m], Ks[m] @ r.coef[:, m], rcond=None)[0]
         for m in range(3)]
    assert abs(opt1_objective(prob, W, r.b, r.rho) - r.objective) <= 1e-8 * max(1, abs(r.objective))
    if solver in ("pddp", "am"):
        assert r.gap < 1e-7



def test_bad_input():
    X, y = toy()
    Ks = np.stack([X @ X.T + 1.0] * 3)
    with pytest.raises(ValueError, match="infeasible nu"):
        solve_vcmkl(Ks, y, nu=0.9)
    with pytest.raises(ValueError, match="solver"):
        solve_vcmkl(Ks, y, solver="newton")
    with pytest.raises(ValueError, match="omega"):
        solve_vcmkl(Ks, y, omega=1.5)
    bad = Ks.copy(); bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError):
        solve_vcmkl(bad, y)
    with pytest.raises(ValueError, match="binary"):
        VCMKLClassifier().fit(X, np.arange(len(y)) % 3)


def test_estimator_clone_pickle():
    X, y = toy()
    clf = VCMKLClassifier([Linear()] * 3, nu=0.1, omega=None, max_iter=10).fit(X, y)   # omega = |I-| / l (the paper's gamma)
    assert clf.score(X, y) > 0.85
    c2 = pickle.loads(pickle.dumps(clf))
    assert np.allclose(c2.decision_function(X), clf.decision_function(X))
    assert clone(clf).get_params()["nu"] == 0.1


# All of scikit-learn's checks apply, none is excused. The tag multi_class=False (the veto-consensus rule is binary by
# construction) makes the checks use binary problems. max_iter=10 only keeps the ~50 checks under 20 s; the default
# (100) passes the same checks.
@parametrize_with_checks([VCMKLClassifier(max_iter=10)])
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_pddp_counts_iterations_and_cache_is_exact():
    X, y = toy(seed=1)
    Ks = np.stack([X @ X.T + 1.0] * 3)
    for max_iter in (4, 30):
        r = solve_vcmkl(Ks, y, nu=0.1, solver="pddp", max_iter=max_iter, warn=False)
        assert r.n_iter <= max_iter                                   # both phases count against max_iter
        assert r.n_qp + r.n_hits <= r.n_iter + 1
    # a cached region's answer equals a fresh QP at a nearby lambda (the certificate guards every hit)
    prob = make_problem(Ks, y, 0.1)
    lam = kmeans_lambda(prob, X[prob.neg])
    ev = _Evaluator(prob, cache=True)
    ev(lam)
    g = np.random.default_rng(0).normal(size=lam.shape)
    lam2 = project_lambda(prob, lam + 1e-3 * g)
    s2 = ev(lam2)
    fresh = solve_inner(prob, ev.qp, *pddp_bounds(prob, lam2), region=False)
    assert abs(s2.J - fresh.J) <= 1e-7 * fresh.J
    if s2.from_cache:
        assert ev.n_hits == 1 and ev.n_qp == 1


@pytest.mark.parametrize("seed", [0, 3])
def test_pddp_no_worse_than_am_same_start(seed):
    X, y = toy(seed=seed)
    Ks = np.stack([X @ X.T + 1.0] * 3)
    prob = make_problem(Ks, y, 0.05)
    lam0 = np.random.default_rng(seed).dirichlet(np.ones(3), len(prob.neg))      # a poor start: not k-means
    p = solve_vcmkl(Ks, y, nu=0.05, solver="pddp", lam0=lam0, max_iter=40, warn=False)
    a = solve_vcmkl(Ks, y, nu=0.05, solver="am", lam0=lam0, max_iter=40, warn=False)
    assert p.objective <= a.objective + 1e-9 * abs(a.objective)


@pytest.mark.parametrize("seed", [0, 3])
def test_multistart_pddp_no_worse_than_every_local_method_same_start(seed):
    "seeds=('sgd', 'cccp'): the vertex phase also starts from SGD's and CCCP's assignments, so PDDP loses to none of them."
    X, y = toy(seed=seed)
    Ks = np.stack([X @ X.T + 1.0] * 3)
    prob = make_problem(Ks, y, 0.05)
    lam0 = np.random.default_rng(seed).dirichlet(np.ones(3), len(prob.neg))
    kw = dict(nu=0.05, lam0=lam0, max_iter=40, warn=False)
    p = solve_vcmkl(Ks, y, solver="pddp", seeds=("sgd", "cccp"), **kw)
    single = solve_vcmkl(Ks, y, solver="pddp", **kw)
    assert p.objective <= single.objective + 1e-9 * abs(single.objective)
    assert set(p.history["seed_ends"]) == {"gradient", "lam0", "sgd", "cccp"}
    assert p.objective == pytest.approx(min(p.history["seed_ends"].values()), rel=1e-9)
    assert p.n_iter > single.n_iter and p.n_qp >= single.n_qp                 # the seeds' work is counted


def test_seeds_are_validated():
    X, y = toy()
    Ks = np.stack([X @ X.T] * 2)
    for bad in [dict(solver="am", seeds=("sgd",)), dict(seeds=("newton",)), dict(seeds=("sgd", "sgd"))]:
        with pytest.raises(ValueError, match="seeds are extra starts"):
            solve_vcmkl(Ks, y, **bad)


def _brute_force_opt1(X, y, nu, omega):
    """Global optimum of the balanced OPT1 by enumerating every vertex assignment of negatives to the two rules and
    solving the inner convex problem of Proposition 1 with cvxpy (an independent formulation: the primal, not the dual)."""
    import itertools
    import cvxpy as cp
    l, d = X.shape
    Ip, In = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    need = int(np.ceil(l * nu / (2 * (1 - omega)) - 1e-12))      # dual feasibility: negatives per rule
    best = np.inf
    for bits in itertools.product((0, 1), repeat=len(In)):
        lam = np.array([[1 - b, b] for b in bits], dtype=float)
        if lam.sum(0).min() < need:
            continue
        W, b, rho = cp.Variable((2, d)), cp.Variable(2), cp.Variable(2, nonneg=True)
        F = X @ W.T + np.ones((l, 1)) @ cp.reshape(b, (1, 2), order="C")
        R = np.ones((l, 1)) @ cp.reshape(rho, (1, 2), order="C")
        xp, xn = cp.Variable(len(Ip), nonneg=True), cp.Variable((len(In), 2), nonneg=True)
        cons = [xp[:, None] @ np.ones((1, 2)) >= R[Ip] - F[Ip], xn >= R[In] + F[In]]
        obj = (0.5 * cp.sum_squares(W) - nu * cp.sum(rho) + omega / l * cp.sum(xp)
               + (1 - omega) / l * cp.sum(cp.multiply(lam, xn)))
        pr = cp.Problem(cp.Minimize(obj), cons)
        pr.solve(solver="CLARABEL")
        best = min(best, pr.value)
    return best


@pytest.mark.parametrize("nu", [0.1, 0.2])
def test_exact_methods_reach_the_brute_force_optimum_on_a_tiny_problem(nu):
    "12 points, two hidden negative subgroups, M = 2 linear kernels: PDDP, AM and CCCP find the global balanced OPT1."
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0, 0.4, (6, 2)), rng.normal([-2.0, 0], 0.4, (3, 2)), rng.normal([2.0, 0], 0.4, (3, 2))])
    y = np.r_[np.ones(6), -np.ones(6)]
    Ks = np.stack([X @ X.T, X @ X.T])
    ref = _brute_force_opt1(X, y, nu, 0.5)
    for solver in ("pddp", "am", "cccp", "sgd"):
        r = solve_vcmkl(Ks, y, nu=nu, omega=0.5, solver=solver)
        assert r.objective >= ref - 1e-7 * abs(ref), (solver, r.objective, ref)     # nobody beats the global optimum
        if solver != "sgd":                                                          # the exact methods attain it here
            assert r.objective == pytest.approx(ref, rel=1e-5), (solver, r.objective, ref)


def test_idle_rule_is_exact_and_reported():
    """Regression: with 2 linear kernels on the ring toy one rule is idle (w_m = 0, the trivial nu-SVM solution). Its
    decision f_m = b_m must be exact (before the fix it was ~1e-14 round-off whose sign made ~40% of the samples
    positive); the primal optimum, solved independently in cvxpy at the returned lambda, has the same value and the
    same idle rule, so the exact classifier is min(f_1, b_2) <= 0: no positive prediction, and a warning says why."""
    import cvxpy as cp
    X, y = toy(seed=0)
    Ks = np.stack([X @ X.T] * 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)      # the idle-rule warning: checked in the chapter
        r = solve_vcmkl(Ks, y, nu=0.05, max_iter=20)
    m = int(np.flatnonzero(r.idle)[0])
    assert np.all(r.coef[:, m] == 0) and r.b[m] <= 0 and r.rho[m] == 0
    # independent primal P(lambda) at the returned lambda
    prob = make_problem(Ks, y, 0.05)
    P, N, l = prob.pos, prob.neg, len(y)
    W, b, rho = cp.Variable((2, 2)), cp.Variable(2), cp.Variable(2, nonneg=True)
    Z = cp.pos(np.ones((l, 1)) @ cp.reshape(rho, (1, 2), order="C")
               - cp.multiply(np.outer(y, np.ones(2)), X @ W + np.ones((l, 1)) @ cp.reshape(b, (1, 2), order="C")))
    obj = 0.5 * cp.sum_squares(W) - prob.nu @ rho + prob.c_plus * cp.sum(cp.max(Z[P], axis=1)) \
        + prob.c_minus * cp.sum(cp.multiply(r.lam, Z[N]))
    pv = cp.Problem(cp.Minimize(obj)).solve(solver="CLARABEL")
    assert abs(pv - r.objective) <= 1e-6 * abs(pv)
    assert np.linalg.norm(W.value[:, m]) <= 1e-6 * np.linalg.norm(W.value[:, 1 - m])


def test_no_idle_rule_when_every_subgroup_is_separable():
    X, y = toy(seed=0)                                   # three negative clusters, three linear rules: all active
    Ks = np.stack([X @ X.T] * 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = solve_vcmkl(Ks, y, nu=0.05, max_iter=20)
    assert not r.idle.any()
    assert np.mean(np.where(r.decision_function(Ks) > 0, 1, -1) == y) > 0.9


def test_drop_idle_takes_the_min_over_active_rules_only():
    from mklbook.vcmkl import VCMKLResult
    K = np.stack([np.eye(3)] * 3)
    r = VCMKLResult(coef=np.array([[1.0, 0, 5], [2, 0, 5], [3, 0, 5]]), b=np.array([0.0, -1.0, 0.0]),
                    idle=np.array([False, True, False]))
    np.testing.assert_array_equal(r.decision_function(K), [-1, -1, -1])               # the idle rule vetoes
    np.testing.assert_array_equal(r.decision_function(K, drop_idle=True), [1, 2, 3])  # min over rules 0 and 2
    r.idle[:] = True                                                                  # nothing active: keep every rule
    np.testing.assert_array_equal(r.decision_function(K, drop_idle=True), [-1, -1, -1])
    with pytest.raises(ValueError, match="The 'idle_rules' parameter of VCMKLClassifier must be a str among"):
        VCMKLClassifier(idle_rules="abstain").fit(np.random.default_rng(0).normal(size=(8, 2)), np.r_[[1] * 4, [-1] * 4])


def test_result_from_primal_makes_iterates_exact_like_the_answer():
    from mklbook.vcmkl import result_from_primal
    X, y = toy(seed=0)
    Ks = np.stack([X @ X.T] * 2)
    r = solve_vcmkl(Ks, y, nu=0.05, max_iter=20, warn=False)
    prob = make_problem(Ks, y, 0.05)
    h = r.history
    k = next(i for i in range(len(h["lam"]) - 1, -1, -1)            # the returned end point among the iterates
             if np.array_equal(h["lam"][i], r.lam) and abs(h["objective"][i] - r.objective) <= 1e-9 * abs(r.objective))
    e = result_from_primal(prob, h["lam"][k], *h["W"][k])
    np.testing.assert_array_equal(e.idle, r.idle)
    np.testing.assert_allclose(e.decision_function(Ks), r.decision_function(Ks), rtol=0, atol=1e-12)
    for lam, W in zip(h["lam"], h["W"]):                            # every iterate: idle rules exactly constant
        e = result_from_primal(prob, lam, *W)
        assert np.all(e.coef[:, e.idle] == 0)


# --- the estimator's fast path against the reference (layer 1 on the full stack) -----------------------------------

def test_low_rank_factor_is_a_feature_map_and_refuses_high_rank():
    from mklbook.kernels import psd_factor
    from mklbook.vcmkl import low_rank_factor
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(120, 5))
    K = Z @ Z.T + 1.0                                               # rank 6
    Phi, P = low_rank_factor(K)
    assert Phi.shape == (120, 6) and psd_factor(K)[0].shape[1] == 6
    np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-9 * np.abs(K).max())
    np.testing.assert_allclose(K @ P, Phi, atol=1e-8 * np.abs(Phi).max())
    assert np.count_nonzero(np.abs(P).sum(1)) == 6                 # coefficients only on the pivots
    G = np.exp(-((Z[:, None] - Z[None]) ** 2).sum(-1))
    assert low_rank_factor(G, max_rank=20) is None
    with pytest.raises(ValueError, match="no positive diagonal"):
        low_rank_factor(np.zeros((4, 4)))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_balanced_assignment_matches_the_lp(seed):
    from types import SimpleNamespace
    from mklbook.vcmkl import balanced_assignment, lmo
    rng = np.random.default_rng(seed)
    for n, M in [(1, 1), (5, 5), (30, 2), (200, 4), (333, 3)]:
        C = rng.random((n, M)) * (rng.random((n, M)) < 0.5)
        C[: n // 2, 0] -= 1.0                                        # half the rows prefer column 0
        for need in (np.zeros(M, int), np.full(M, n // M), rng.integers(0, n // M + 1, M)):
            a = balanced_assignment(C, need)
            assert a.shape == (n,) and (np.bincount(a, minlength=M) >= need).all()
            lam, value = lmo(SimpleNamespace(n_min=need.astype(float)), C)
            assert C[np.arange(n), a].sum() == pytest.approx(value, abs=1e-10)
    with pytest.raises(RuntimeError, match="infeasible"):
        balanced_assignment(np.zeros((3, 2)), [2, 2])


def _stack_and_factors(X, n_rules=3):
    from mklbook.vcmkl import low_rank_factor
    K = (X - X.mean(0)) @ (X - X.mean(0)).T + 1.0
    return np.stack([K] * n_rules), low_rank_factor(K)


def test_sliced_factor_problem_equals_the_problem_of_the_sliced_stack():
    "A cross-validation fold's problem (rows of the shared factor) is the fold's own problem: same OPT1 value, certified."
    from mklbook.vcmkl import VCMKLClassifier, _solve_problem, kmeans_lambda
    X, y = toy(seed=2)
    Ks, fac = _stack_and_factors(X)
    rows = np.r_[np.arange(0, 25, 2), np.arange(25, 85, 2)]       # a training fold
    clf = VCMKLClassifier(); clf.rule_kernel_ = np.zeros(3, int)
    fast = clf._problem([fac], rows, y[rows], 0.05)
    ref = make_problem(Ks[:, rows][:, :, rows], y[rows], 0.05)
    lam0 = kmeans_lambda(ref)
    a = _solve_problem(fast, "am", lam0, 50, 1e-4, 0, False, ())
    b = solve_vcmkl(Ks[:, rows][:, :, rows], y[rows], 0.05, solver="am", lam0=lam0, warn=False)
    assert a.gap < 1e-7 and b.gap < 1e-7
    assert a.objective == pytest.approx(b.objective, rel=1e-7)
    np.testing.assert_array_equal(a.lam, b.lam)


@pytest.mark.parametrize("solver", ["am", "pddp"])
def test_estimator_with_given_nu_equals_solve_vcmkl_on_its_stack(solver):
    X, y = toy(seed=3)
    clf = VCMKLClassifier([Linear()] * 3, nu=0.05, solver=solver, max_iter=30).fit(X, y)
    assert len(clf.bank_.kernels_) == 1 and clf.rule_kernel_.tolist() == [0, 0, 0]   # one kernel matrix, one factor
    Ks = np.stack([X @ X.T] * 3)
    ref = solve_vcmkl(Ks, y, nu=0.05, solver=solver, max_iter=30, warn=False)
    assert clf.result_.gap < 1e-7
    assert clf.result_.objective == pytest.approx(ref.objective, rel=1e-6)
    np.testing.assert_allclose(clf.decision_function(X), ref.decision_function(Ks), atol=1e-7)


def test_distinct_kernels_are_kept_apart():
    from mklbook.kernels import Gaussian
    X, y = toy(seed=0)
    clf = VCMKLClassifier([Linear(), Gaussian(0.5), Linear(), Gaussian(0.5), Gaussian(1.0)], nu=0.02).fit(X, y)
    assert len(clf.bank_.kernels_) == 3 and clf.rule_kernel_.tolist() == [0, 1, 0, 1, 2]
    np.testing.assert_allclose(clf.weights_, [clf.rule_weights_[[0, 2]].sum(), clf.rule_weights_[[1, 3]].sum(),
                                              clf.rule_weights_[4]])
    assert clf.weights_.sum() == pytest.approx(1.0) and clf.rule_weights_.shape == (5,)


# --- defaults: the majority class is never traded away --------------------------------------------------------------

def _imbalanced(minority_label, seed=0):
    from sklearn.datasets import make_classification
    from sklearn.preprocessing import MinMaxScaler
    X, y = make_classification(300, 18, n_informative=4, weights=[0.91], flip_y=0.03, random_state=seed)
    X = MinMaxScaler().fit_transform(X)
    return X, (y if minority_label == 1 else 1 - y)


@pytest.mark.parametrize("minority_label", [0, 1])
def test_defaults_do_not_trade_the_majority_away(minority_label):
    """With the minority as the consensus class (+1) or as the veto class (-1), held-out accuracy meets the rule for
    defaults (at least the majority rate minus one point and SVC() minus three), and no split falls to the minority rate.
    Before the fix (nu chosen among VCMKL settings only, idle rules vetoing, threshold 0) the minority-as-veto case fell
    to the minority rate on some splits; without the refit guard, one split with omega = 1/2 fell to 0.23."""
    from sklearn.dummy import DummyClassifier
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import SVC
    X, y = _imbalanced(minority_label)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        s = cross_val_score(VCMKLClassifier(), X, y, cv=cv)
    majority, svc = cross_val_score(DummyClassifier(), X, y, cv=cv), cross_val_score(SVC(), X, y, cv=cv)
    assert s.mean() >= max(majority.mean() - 0.01, svc.mean() - 0.03) - 1e-12, (s, majority, svc)   # the book's rule
    assert (s >= majority - 0.05).all(), (s, majority)             # no split trades the majority away


def test_auto_selection_records_its_choice():
    X, y = toy(seed=1)
    clf = VCMKLClassifier().fit(X, y)
    assert clf.idle_rules_ in ("veto", "drop") and clf.threshold_ in (0.0, np.inf, -np.inf)
    assert set(clf.cv_scores_) == {0.1, 0.3, 0.5, 0.8}
    from mklbook.vcmkl import largest_nu
    assert any(np.isclose(clf.nu_, f * largest_nu(y, 3)) for f in clf.cv_scores_)
    g = clf.decision_function(X)
    np.testing.assert_array_equal(clf.predict(X), np.where(g > 0, 1.0, -1.0))
    fixed = VCMKLClassifier(nu=clf.nu_).fit(X, y)                    # a given nu: OPT1's own rule, threshold 0
    assert fixed.threshold_ == 0.0 and fixed.idle_rules_ == "veto"


def test_best_threshold_prefers_zero_and_reaches_the_constant_rules():
    from mklbook.vcmkl import best_threshold
    g = np.array([-2.0, -1.0, 1.0, 2.0])
    assert best_threshold(g, np.array([-1, -1, 1, 1])) == (1.0, 0.0)
    acc, theta = best_threshold(g, np.array([1, 1, 1, 1]))            # all positive
    assert acc == 1.0 and (g > theta).all()
    acc, theta = best_threshold(g, -np.ones(4))                       # all negative
    assert acc == 1.0 and not (g > theta).any()
    y = np.array([-1, -1, -1, 1])                                     # a cut is searched only when asked for
    assert best_threshold(g, y) == (0.75, 0.0) and best_threshold(g, y, cuts=True) == (1.0, 1.5)   # tie: OPT1's rule


# --- parameters validated by declaration ------------------------------------------------------------------------------

@pytest.mark.parametrize("params, match", [
    (dict(nu=-1), "The 'nu' parameter of VCMKLClassifier must be"),
    (dict(nu=1.5), "The 'nu' parameter of VCMKLClassifier must be"),
    (dict(nu="fast"), "The 'nu' parameter of VCMKLClassifier must be"),
    (dict(omega=1.0), "The 'omega' parameter of VCMKLClassifier must be"),
    (dict(omega="False"), "The 'omega' parameter of VCMKLClassifier must be"),
    (dict(solver="newton"), "The 'solver' parameter of VCMKLClassifier must be a str among"),
    (dict(max_iter=0), "The 'max_iter' parameter of VCMKLClassifier must be an int in the range"),
    (dict(max_iter=2.5), "The 'max_iter' parameter of VCMKLClassifier must be an int"),
    (dict(tol=0), "The 'tol' parameter of VCMKLClassifier must be a float in the range"),
    (dict(idle_rules="abstain"), "The 'idle_rules' parameter of VCMKLClassifier must be a str among"),
    (dict(seeds="sgd"), "The 'seeds' parameter of VCMKLClassifier must be"),
    (dict(nu_grid=0.5), "The 'nu_grid' parameter of VCMKLClassifier must be an array-like"),
    (dict(search_size=10), "The 'search_size' parameter of VCMKLClassifier must be"),
    (dict(random_state="seed"), "The 'random_state' parameter of VCMKLClassifier must be"),
    (dict(kernels=Linear()), "The 'kernels' parameter of VCMKLClassifier must be"),
    (dict(n_jobs=1.5), "The 'n_jobs' parameter of VCMKLClassifier must be"),
])
def test_parameters_are_validated_by_declaration(params, match):
    X, y = toy()
    with pytest.raises(ValueError, match=match):
        VCMKLClassifier(**params).fit(X, y)


def test_nu_grid_values_are_checked():
    X, y = toy()
    with pytest.raises(ValueError, match="nu_grid must hold fractions"):
        VCMKLClassifier(nu_grid=(0.5, 1.5)).fit(X, y)


def test_the_constant_fallback_says_so():
    """Labels independent of the inputs, the minority as the veto class: the rules go idle and veto everything (the
    minority), no VCMKL setting beats the majority on held-out data, and the estimator predicts it, with a warning."""
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(90, 4)), np.r_[-np.ones(12), np.ones(78)]
    with pytest.warns(UserWarning, match="predicts the majority class everywhere"):
        clf = VCMKLClassifier().fit(X, y)
    assert clf.threshold_ == -np.inf and (clf.predict(X) == 1).all()
    assert np.all(clf.decision_function(X) == np.inf)


def test_refit_guard_refits_when_the_full_sample_misses_its_cross_validated_accuracy(monkeypatch):
    """Guard 2 of `nu='auto'`: a refit whose training accuracy falls short of its CV accuracy (forced here: the first
    refit is reported at accuracy 0) is replaced by a refit at another fraction that meets its own CV accuracy."""
    from sklearn.datasets import load_breast_cancer
    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[::3], y[::3]
    plain = VCMKLClassifier().fit(X, y)
    assert not plain.refit_guarded_                             # the guard is quiet when the refit does its job
    real, first = VCMKLClassifier._train_accuracy, {}

    def forced(self, factors, y_pm):
        first.setdefault("result", self.result_)
        return 0.0 if self.result_ is first["result"] else real(self, factors, y_pm)

    monkeypatch.setattr(VCMKLClassifier, "_train_accuracy", forced)
    e = VCMKLClassifier().fit(X, y)
    monkeypatch.undo()
    assert e.refit_guarded_ and e.result_ is not first["result"]
    assert e.refit_fraction_ != plain.refit_fraction_
    assert np.isclose(e.nu_, e.refit_fraction_ * plain.nu_ / plain.refit_fraction_)
    assert e.score(X, y) >= e.cv_scores_[e.refit_fraction_] - 0.05


def test_auto_nu_gives_way_to_the_majority_rule_within_one_standard_error():
    "No signal, 10 % positives: the constant rule (threshold_ = +inf, all negative); a separable set keeps its rules."
    from mklbook.vcmkl import VCMKLClassifier
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 6))
    y = np.where(np.arange(200) < 20, 1, 0)
    est = VCMKLClassifier().fit(X, y)
    assert est.threshold_ == np.inf and (est.predict(X) == 0).all()
    Xs = rng.standard_normal((200, 2))
    ys = (Xs[:, 0] > 0.8).astype(int)                         # a half-plane: one rule separates it
    sep = VCMKLClassifier().fit(Xs, ys)
    assert np.isfinite(sep.threshold_) and sep.score(Xs, ys) > 0.9


# --- the default rule set, chosen with nu; rank-capped feature maps -------------------------------------------------

def test_a_truncated_factor_is_the_nystrom_factor_on_its_pivots():
    "`low_rank_factor(truncate=True)`: Phi Phi^T = K[:, S] K_SS^-1 K[S, :] (Nystrom on the pivots), K P = Phi, K - Phi Phi^T PSD."
    from mklbook.vcmkl import low_rank_factor
    X = np.random.default_rng(0).normal(size=(120, 5))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))
    assert low_rank_factor(K, max_rank=20) is None                      # without truncate: give up past max_rank
    Phi, P = low_rank_factor(K, max_rank=20, truncate=True)
    assert Phi.shape == (120, 20)
    S = np.flatnonzero(np.abs(P).sum(1))                                # the pivots: the rows of P that are used
    assert S.size == 20
    np.testing.assert_allclose(Phi @ Phi.T, K[:, S] @ np.linalg.solve(K[np.ix_(S, S)], K[S]), atol=1e-8)
    np.testing.assert_allclose(K @ P, Phi, atol=1e-10)                   # a test point's features: k(x, S) P_S
    assert np.linalg.eigvalsh(K - Phi @ Phi.T).min() > -1e-10
    full, _ = low_rank_factor(K, max_rank=120, truncate=True)           # a cap at m: the exact factor
    np.testing.assert_allclose(full @ full.T, K, atol=1e-8)
    calls = []

    def columns(J):                                                     # K never formed: only the pivot columns
        calls.append(len(J))
        return K[:, J]
    lazy, P2 = low_rank_factor(None, max_rank=20, truncate=True, columns=columns, diag=np.diag(K))
    np.testing.assert_array_equal(lazy, Phi)                             # the same factor, bit for bit
    np.testing.assert_array_equal(P2, P)
    assert sum(calls) == 20                                              # one column per pivot, no more
    with pytest.raises(ValueError, match="columns"):
        low_rank_factor(None, max_rank=20, columns=columns)             # diag is needed too


def test_rank_capped_vcmkl_never_forms_an_m_by_m_kernel():
    """With `max_rank`, the factors come from pivot columns of the streamed bank: the fit equals the one from the formed
    kernels (to round-off of the streamed statistics) and no (m, m) kernel is built (`fit_transform` is not called)."""
    from unittest import mock
    from mklbook.kernels import Gaussian, KernelBank
    from mklbook.vcmkl import low_rank_factor
    X, y = toy(seed=4)
    kw = dict(kernels=[Gaussian(0.5), Linear()], nu=0.05, max_iter=30, max_rank=8)
    with mock.patch.object(KernelBank, "fit_transform", side_effect=AssertionError("an m x m stack was formed")):
        lazy = VCMKLClassifier(**kw).fit(X, y)
    Ks = KernelBank(kw["kernels"]).fit_transform(X)
    for q, K in enumerate(Ks):
        Phi, _ = low_rank_factor(K, max_rank=8, truncate=True)
        np.testing.assert_allclose(lazy_factors(lazy, X)[q][0], Phi, atol=1e-10)
    assert lazy.result_.gap < 1e-7 and lazy.score(X, y) > 0.5


def lazy_factors(clf, X):
    "The factors `_rule_factors` builds for a fitted classifier's settings."
    return clf._rule_factors(X)[3]


def test_default_rules_are_chosen_by_cross_validation_among_the_declared_sets():
    """`kernels=None` with nu="auto": one CV over DEFAULT_RULE_SETS x nu_grid x idle handling; the bank keeps the chosen
    set's kernel only, and the fitted rule predicts like a model refitted with that set and nu given."""
    from mklbook.kernels import Gaussian
    from mklbook.vcmkl import DEFAULT_RULE_SETS
    r = np.random.default_rng(1)
    X = r.normal(size=(240, 2))
    y = np.where((X ** 2).sum(1) < 1.2, 1, -1)                           # a disc: no linear rule set can separate it
    clf = VCMKLClassifier().fit(X, y)
    assert len(clf.rule_set_scores_) == len(DEFAULT_RULE_SETS)
    best = int(np.argmax(clf.rule_set_scores_))
    assert DEFAULT_RULE_SETS[best][0] == "gaussian"                      # the CV sees what the disc needs
    assert [type(k) for k in clf.bank_.kernels_] == [Gaussian] and len(clf.rule_kernel_) == 1
    assert clf.rule_set_scores_[best] > max(clf.rule_set_scores_[:2]) + 0.1
    assert clf.score(X, y) > 0.9
    lin = VCMKLClassifier(kernels=[Linear(standardize=True)] * 3).fit(X, y)
    assert lin.score(X, y) < clf.score(X, y) - 0.1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                                  # linear rules on a disc go idle: not the point
        given = VCMKLClassifier(nu=0.05).fit(X, y)                      # a given nu: three linear rules, no search
    assert [type(k) for k in given.bank_.kernels_] == [Linear] and given.rule_kernel_.tolist() == [0, 0, 0]
    assert not hasattr(given, "rule_set_scores_")


def test_max_rank_none_is_exact_and_a_cap_above_the_rank_changes_nothing():
    from mklbook.kernels import Gaussian
    X, y = toy(seed=4)
    kw = dict(kernels=[Gaussian(0.5)] * 2, nu=0.05, max_iter=30)
    exact = VCMKLClassifier(max_rank=None, **kw).fit(X, y)
    capped = VCMKLClassifier(max_rank=len(y), **kw).fit(X, y)
    low = VCMKLClassifier(max_rank=5, **kw).fit(X, y)
    np.testing.assert_allclose(capped.decision_function(X), exact.decision_function(X), atol=1e-6)
    assert exact.result_.gap < 1e-7 and low.result_.gap < 1e-7         # each problem certified on its own factor
    assert np.abs(low.decision_function(X) - exact.decision_function(X)).max() > 1e-3


def test_the_search_gives_the_same_model_on_one_thread_and_on_several():
    """The nu="auto" search runs its (rule set, fold) paths on threads, each fold's first fit from the previous fold's
    first model: the chosen setting, the scores and the fitted rules are bit for bit those of one thread."""
    r = np.random.default_rng(3)
    X = r.normal(size=(240, 3))
    y = np.where((X[:, :2] ** 2).sum(1) < 1.5, 1, -1)
    one, two = (VCMKLClassifier(n_jobs=n).fit(X, y) for n in (1, 3))
    assert one._search_threads(9) == 1 and two._search_threads(9) == 3 and two._search_threads(2) == 2
    assert (one.nu_, one.threshold_, one.idle_rules_) == (two.nu_, two.threshold_, two.idle_rules_)
    assert one.cv_scores_ == two.cv_scores_ and one.rule_set_scores_ == two.rule_set_scores_
    np.testing.assert_array_equal(one.result_.coef, two.result_.coef)
    np.testing.assert_array_equal(one.decision_function(X), two.decision_function(X))
    assert VCMKLClassifier()._search_threads(9) >= 1                       # None: the BLAS pool's size


def test_a_failing_search_fit_raises_instead_of_waiting(monkeypatch):
    """A fold's first fit that fails must not leave the next fold waiting for its model: the error reaches the caller."""
    import mklbook.vcmkl as V
    calls = []

    def failing(*args, **kwargs):
        calls.append(1)
        raise RuntimeError("inner QP failed on purpose")
    monkeypatch.setattr(V, "_solve_problem", failing)
    X, y = toy()
    with pytest.raises(RuntimeError, match="on purpose"):
        VCMKLClassifier(n_jobs=2).fit(X, y)
    assert calls
