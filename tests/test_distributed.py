"""Real Dask clusters: `mklbook reproduce ... --scheduler ADDRESS` gives the serial table; the streamed statistics on the
workers equal the serial ones; a live `Client` survives clone, GridSearchCV and pickle; a bad scheduler fails fast.

A `dask.distributed.LocalCluster` with two worker processes on loopback stands in for a cluster; the reproduction is
the quick baseline of the protocol chapter (`mklbook reproduce protocol --quick`), run through the command line's entry point
(`mklbook.cli.main`), once serially and once with `--scheduler`. The test is skipped only when dask.distributed is not
installed or cannot start on 127.0.0.1 (e.g. a sandbox without loopback sockets); any other failure is a failure.
"""
import pytest

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'dask[distributed]')")


@pytest.fixture(scope="module")
def cluster():
    try:
        cl = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None, silence_logs=40)
    except (OSError, RuntimeError, TimeoutError) as e:   # no loopback networking in this environment
        pytest.skip(f"dask.distributed cannot start a LocalCluster on 127.0.0.1: {e!r}")
    with cl:
        yield cl


def test_reproduce_on_a_dask_cluster_equals_serial(cluster, tmp_path, capsys):
    "The CLI's serial and `--scheduler` runs write the same table; the fits ran on the two workers."
    from mklbook.cli import main
    addr = cluster.scheduler_address
    serial, dist = tmp_path / "serial", tmp_path / "dask"
    assert main(["reproduce", "protocol", "--quick", "--out", str(serial)]) == 0
    try:
        assert main(["reproduce", "protocol", "--quick", "--out", str(dist), "--scheduler", addr]) == 0
    finally:                       # the CLI leaves its Client open (it is the process's default client): close it
        try:
            distributed.default_client().close()
        except ValueError:
            pass
    out = capsys.readouterr().out
    assert f"sending fits to the Dask scheduler at {addr} (2 workers)" in out
    a = (serial / "protocol" / "svm_baseline.md").read_text()
    b = (dist / "protocol" / "svm_baseline.md").read_text()
    assert "| breast_cancer | SVM |" in a and "| digits | SVM |" in a
    assert a == b
    with distributed.Client(addr) as client:            # each worker process executed tasks
        counts = client.run(lambda dask_worker: dask_worker.state.transition_counter)
    assert len(counts) == 2 and all(v > 0 for v in counts.values()), counts


def test_streamed_statistics_on_a_dask_cluster_equal_serial(cluster):
    "StreamedBank(client=<address>) sums the workers' tiles into the serial answer (1e-12, relative)."
    import numpy as np
    from mklbook.kernels import Polynomial, gaussian_bank
    from mklbook.streaming import StreamedBank
    rng = np.random.default_rng(0)
    X = rng.standard_normal((700, 6)) * np.geomspace(1, 50, 6)
    y = np.sin(X[:, 0]) + 0.1 * rng.standard_normal(700)
    bank = gaussian_bank([1e-4, 1e-3, 2e-3, 0.05], standardize=False) + [Polynomial(2, 1.0, standardize=True)]
    kw = dict(normalize="trace", center=True, tile=64, progress=False)
    serial = StreamedBank(bank, n_jobs=2, **kw).fit(X, y)
    dist = StreamedBank(bank, client=cluster.scheduler_address, **kw).fit(X, y)
    for name in ("a_", "M_", "col_mean_", "diag_fit_", "scale_"):
        s, d = getattr(serial, name), getattr(dist, name)
        assert np.abs(d - s).max() <= 1e-12 * np.abs(s).max(), name


def test_a_live_client_is_shared_by_clones_and_pickled_as_its_address(cluster):
    "clone, GridSearchCV and pickle work with client=Client(...): clones share it, a pickle keeps the address."
    import pickle
    import numpy as np
    from sklearn.base import clone
    from sklearn.model_selection import GridSearchCV
    from mklbook.kernels import Gaussian
    from mklbook.streaming import StreamedAlignMKL, StreamedBank
    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 4))
    y = (X[:, 0] + 0.3 * rng.standard_normal(150) > 0).astype(int)
    with distributed.Client(cluster.scheduler_address, set_as_default=False) as client:
        est = StreamedAlignMKL([Gaussian(0.1), Gaussian(1.0)], client=client)
        assert clone(est).client is client
        gs = GridSearchCV(est, {"method": ["unif", "alignf"]}, cv=3, error_score="raise").fit(X, y)
        assert gs.best_score_ > 0.8 and gs.best_estimator_.client is client
        for _ in range(3):                               # equal data fitted again at once: no task loses its inputs
            StreamedAlignMKL([Gaussian(0.1), Gaussian(1.0)], client=client).fit(X, y)
        fitted = StreamedAlignMKL([Gaussian(0.1), Gaussian(1.0)], client=client).fit(X, y)
        back = pickle.loads(pickle.dumps(fitted))
        assert back.client == cluster.scheduler_address and back.bank_.client == cluster.scheduler_address
        np.testing.assert_array_equal(back.predict(X), fitted.predict(X))
        back.fit(X, y)                                   # the address connects again
        np.testing.assert_allclose(back.weights_, fitted.weights_, rtol=1e-12)
        bank = pickle.loads(pickle.dumps(StreamedBank([Gaussian(0.1)], client=client, progress=False).fit(X, y)))
        assert bank.client == cluster.scheduler_address
    with pytest.raises(ValueError, match="client= is 'closed'.*client=None to run in this process"):
        StreamedAlignMKL(client=client).fit(X, y)


def test_an_unreachable_scheduler_fails_fast_with_the_fix(monkeypatch):
    "No scheduler at the address: a ConnectionError within the connect timeout, naming the address and client=None."
    import time
    import numpy as np
    from mklbook import streaming
    monkeypatch.setattr(streaming, "_CONNECT_TIMEOUT", 1)
    X = np.random.default_rng(0).standard_normal((40, 3))
    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match=r"could not reach a Dask scheduler at 'tcp://127.0.0.1:9' within 1 s.*"
                                              r"client=None to run in this process"):
        streaming.StreamedAlignMKL(client="tcp://127.0.0.1:9").fit(X, X[:, 0] > 0)
    assert time.perf_counter() - t0 < 20
