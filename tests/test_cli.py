"""The main command as the README gives it: `mklbook reproduce all --quick` runs offline, on data that ship with
scikit-learn, and ends with a summary and an exit status that says whether every part worked."""
import urllib.request

from mklbook.cli import load_chapters, main


def test_quick_run_of_every_part_is_offline_and_summarised(tmp_path, monkeypatch, capfd):
    def no_network(*args, **kwargs):
        raise OSError("no network in this test")
    monkeypatch.setattr(urllib.request, "urlopen", no_network)
    monkeypatch.setenv("MKLBOOK_DATA", str(tmp_path / "empty-cache"))     # nothing cached: a download would fail
    code = main(["reproduce", "all", "--quick", "--out", str(tmp_path / "results")])
    out, err = capfd.readouterr()                                         # file-descriptor level: C libraries too
    assert code == 0, f"a quick part failed offline:\n{out}\n{err[-3000:]}"
    summary = out[out.rindex("part "):]
    for part in load_chapters():
        assert any(line.split()[:2] == [part, "ok"] for line in summary.splitlines()), f"{part} not ok:\n{summary}"
    assert "\r" not in out + err, "a progress bar wrote carriage returns into a log"
    assert "Running HiGHS" not in out + err and "THIRD_PARTY" not in out + err, "a solver banner reached the output"

