"""`mklbook reproduce ... --scheduler ADDRESS` on a real Dask cluster gives the same table as the serial run.

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
