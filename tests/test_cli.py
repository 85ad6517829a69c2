"""The command line's behaviour: a quick part runs offline on data that ship with scikit-learn, the run ends with a
summary of every part, and the exit status says whether every part worked.

The README's main command itself (`mklbook reproduce all --quick`, every part) is run by `.ci/run` exactly as written,
in a clean virtual environment with the runtime requirements alone, no data cache and no reachable data host; it is not
run a second time here."""
import urllib.request

import pytest

import mklbook.protocol as protocol
from mklbook.cli import load_chapters, main


@pytest.fixture
def offline(tmp_path, monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("no network in this test")
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    monkeypatch.setenv("MKLBOOK_DATA", str(tmp_path / "empty-cache"))     # nothing cached: a download would fail


def test_a_quick_part_runs_offline_and_the_run_is_summarised(tmp_path, offline, capfd):
    code = main(["reproduce", "protocol", "--quick", "--out", str(tmp_path / "results")])
    out, err = capfd.readouterr()                                         # file-descriptor level: C libraries too
    assert code == 0, f"the quick protocol part failed offline:\n{out}\n{err[-3000:]}"
    summary = out[out.rindex("part "):]
    assert any(line.split()[:2] == ["protocol", "ok"] for line in summary.splitlines()), summary
    assert (tmp_path / "results" / "protocol" / "svm_baseline.md").exists()
    assert "\r" not in out + err, "a progress bar wrote carriage returns into a log"


def test_a_failing_part_is_reported_and_sets_the_exit_status(tmp_path, offline, monkeypatch, capfd):
    def broken(out, quick=True, n_jobs=None):
        raise RuntimeError("this part is broken on purpose")
    load_chapters()
    monkeypatch.setitem(protocol.REPRODUCTIONS, "zz_broken",
                        {"func": broken, "description": "a part that fails", "order": 99, "module": __name__})
    code = main(["reproduce", "protocol", "zz_broken", "--quick", "--out", str(tmp_path / "results")])
    out, err = capfd.readouterr()
    assert code == 1
    summary = out[out.rindex("part "):]
    assert any(line.split()[:2] == ["protocol", "ok"] for line in summary.splitlines()), summary
    assert any(line.split()[:2] == ["zz_broken", "failed"] for line in summary.splitlines()), summary
    assert "this part is broken on purpose" in err


def test_every_registered_part_is_listed(capsys):
    assert main(["reproduce"]) == 0
    listed = capsys.readouterr().out
    for part in load_chapters():
        assert part in listed


def test_bad_command_lines_fail_before_any_computation(tmp_path, capsys):
    assert main(["reproduce", "all", "protocol"]) == 2
    assert "'all' already runs every part" in capsys.readouterr().err
    f = tmp_path / "a-file"
    f.write_text("x")
    assert main(["reproduce", "protocol", "--quick", "--out", str(f)]) == 2
    assert "is a file; give a folder" in capsys.readouterr().err
    assert main(["reproduce", "protocol", "--quick", "--out", str(f / "below")]) == 2
    assert "cannot create or write this folder" in capsys.readouterr().err
    assert main(["reproduce", "no-such-part"]) == 2
    assert "no reproduction named 'no-such-part'" in capsys.readouterr().err
