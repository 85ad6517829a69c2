"""Tests of mklbook.data: registry, verified cache, readers, clean-up and the three errors (DESIGN §4, §7).

No test touches the network: downloads go to a closed local port or to file:// URLs.
The real-data tests run when MKLBOOK_DATA points at a filled cache (e.g. shared/datasets) and skip otherwise.
"""
import csv
import dataclasses
import gzip
import hashlib
import os
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mklbook.data import (
    MANIFEST, REGISTRY, ChecksumError, DatasetInfo, DatasetNotFoundError, UnknownDatasetError,
    binary_labels, class_codes, dataset_info, encode_nucleotides, fetch, get_data_home, list_datasets,
    load_dataset, load_sentiment, read_arff, read_csv_dataset, read_keel, read_libsvm, read_sentiment, subsample,
)

DATA = os.environ.get("MKLBOOK_DATA")
HAVE_DATA = bool(DATA) and all((Path(DATA) / row[1]).is_file() for row in MANIFEST)
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="MKLBOOK_DATA is not set to a complete dataset cache "
                                "(e.g. MKLBOOK_DATA=../shared/datasets); real-file tests skipped")
SHARED_MANIFEST = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "MANIFEST.tsv"
SKLEARN_SETS = ["breast_cancer", "digits", "iris", "wine", "diabetes"]


def files_in(d):
    return sorted(str(p.relative_to(d)) for p in Path(d).rglob("*") if p.is_file())


# ---------------------------------------------------------------- registry

def test_registry_lists_every_manifest_name_and_the_sklearn_sets():
    names = list_datasets()
    assert names[:5] == SKLEARN_SETS
    assert [r[0] for r in MANIFEST] == names[5:]
    assert {"sentiment-books-train", "sentiment-books-test", "sentiment-dvd-train"} <= set(names)
    assert len(names) == len(set(names)) == 31
    for task in ("binary", "multiclass", "regression"):
        assert all(dataset_info(n).task == task for n in list_datasets(task))
    with pytest.raises(ValueError, match="'binary', 'multiclass'"):
        list_datasets("classification")


@pytest.mark.skipif(not SHARED_MANIFEST.is_file(), reason="no ../shared/datasets/MANIFEST.tsv next to the project")
def test_embedded_manifest_matches_shared_manifest():
    with open(SHARED_MANIFEST, newline="") as f:
        rows = list(csv.reader(f, delimiter="\t"))
    assert rows[0] == ["name", "file", "repo", "commit", "path", "sha256", "bytes"]
    assert [tuple(r[:6]) + (int(r[6]),) for r in rows[1:]] == list(MANIFEST)


def test_dataset_info_fields():
    info = dataset_info("ionosphere")
    assert isinstance(info, DatasetInfo)
    assert info.shape == (351, 34) and info.task == "binary" and info.format == "csv"
    assert info.url == ("https://raw.githubusercontent.com/jbrownlee/Datasets/"
                        "d20fcb6402ae34e653d4513b00f39257bb37ed7f/ionosphere.csv")
    assert info.sha256.startswith("fd6dd786") and info.bytes == 76466
    assert info.classes == ("b", "g") and info.positive.startswith("g")
    for n in list_datasets():
        i = dataset_info(n)
        if i.task == "binary":
            assert len(i.classes) == 2 and i.positive is not None
        if i.task == "multiclass":
            assert len(i.classes) >= 3
        if i.file is not None:
            assert i.url == f"https://raw.githubusercontent.com/{i.repo}/{i.commit}/{i.source_path}"
            assert len(i.sha256) == 64 and i.bytes > 0
    assert dataset_info("Ionosphere") is dataset_info("ionosphere")


# ---------------------------------------------------------------- the three errors

def test_unknown_name_raises_unknown_dataset_error():
    with pytest.raises(UnknownDatasetError):
        load_dataset("ionosfere")
    with pytest.raises(UnknownDatasetError):
        dataset_info("no-such-set-at-all")
    assert issubclass(UnknownDatasetError, ValueError)


def test_checksum_mismatch_names_expected_got_path_and_fix(tmp_path):
    bad = tmp_path / "uci" / "sonar.csv"
    bad.parent.mkdir()
    bad.write_text("0.1,0.2,R\n")
    with pytest.raises(ChecksumError) as e:
        load_dataset("sonar", data_home=tmp_path, download=False)
    msg = str(e.value)
    assert dataset_info("sonar").sha256 in msg and hashlib.sha256(b"0.1,0.2,R\n").hexdigest() in msg
    assert "re-download" in msg
    assert bad.read_text() == "0.1,0.2,R\n"  # the loader reports, it does not delete


def test_missing_file_without_download(tmp_path):
    with pytest.raises(DatasetNotFoundError) as e:
        load_dataset("sonar", data_home=tmp_path, download=False)
    msg = str(e.value)
    assert str(tmp_path / "uci" / "sonar.csv") in msg
    assert "MKLBOOK_DATA" in msg and "download=True" in msg
    assert files_in(tmp_path) == []


def test_download_failure_leaves_nothing_behind(tmp_path, monkeypatch):
    info = dataset_info("sonar")
    monkeypatch.setitem(REGISTRY, "sonar", dataclasses.replace(info, url="http://127.0.0.1:9/sonar.csv"))
    with pytest.raises(DatasetNotFoundError) as e:
        load_dataset("sonar", data_home=tmp_path)
    msg = str(e.value)
    assert "http://127.0.0.1:9/sonar.csv" in msg and str(tmp_path / "uci" / "sonar.csv") in msg
    assert "curl" in msg


def _tiny_entry(tmp_path, text, **kw):
    """Register a tiny CSV set served from a local file:// mirror."""
    src = tmp_path / "mirror" / "tiny.csv"
    src.parent.mkdir(exist_ok=True)
    src.write_text(text)
    sha = hashlib.sha256(text.encode()).hexdigest()
    spec = dict(name="tiny", task="binary", n_samples=3, n_features=2, format="csv", description="tiny",
                label="last", classes=("n", "p"), file="sub/tiny.csv", url=src.as_uri(), sha256=sha,
                bytes=len(text), reader=dict(label_column=-1))
    spec.update(kw)
    return DatasetInfo(**spec)


def test_download_verify_and_per_process_verification_cache(tmp_path, monkeypatch):
    monkeypatch.setitem(REGISTRY, "tiny", _tiny_entry(tmp_path, "1,2,p\n3,4,n\n5,6,p\n"))
    home = tmp_path / "cache"
    X, y = load_dataset("tiny", data_home=home)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(y, [1, -1, 1])
    assert files_in(home) == ["sub/tiny.csv"]
    # a changed file is hashed again
    (home / "sub" / "tiny.csv").write_text("1,2,p\n3,4,n\n5,7,p\n")
    with pytest.raises(ChecksumError):
        fetch("tiny", data_home=home)


def test_fetch_refuses_sklearn_sets():
    with pytest.raises(ValueError, match="embedded in scikit-learn"):
        fetch("iris")


def test_data_home_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv("MKLBOOK_DATA", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert get_data_home() == Path.home() / ".cache" / "mklbook"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert get_data_home() == tmp_path / "xdg" / "mklbook"
    monkeypatch.setenv("MKLBOOK_DATA", str(tmp_path / "md"))
    assert get_data_home() == tmp_path / "md"
    assert get_data_home(tmp_path / "arg") == tmp_path / "arg"


def test_bad_options():
    with pytest.raises(TypeError, match="list_datasets"):
        dataset_info(3)


# ---------------------------------------------------------------- every registered set

@pytest.mark.parametrize("name", SKLEARN_SETS)
def test_sklearn_sets_load_anywhere(name):
    info = dataset_info(name)
    X, y = load_dataset(name)
    assert X.shape == info.shape and X.dtype == np.float64 and len(y) == info.n_samples


def test_sklearn_breast_cancer_positive_is_malignant():
    from sklearn.datasets import load_breast_cancer
    _, t = load_breast_cancer(return_X_y=True)
    _, y = load_dataset("breast_cancer")
    np.testing.assert_array_equal(y, np.where(t == 0, 1, -1))


@needs_data
@pytest.mark.parametrize("name", [r[0] for r in MANIFEST])
def test_registered_set_loads_with_documented_shape(name):
    info = dataset_info(name)
    X, y = load_dataset(name, download=False)
    assert X.shape == info.shape
    assert X.dtype == np.float64 and sp.issparse(X) == info.sparse
    assert y.shape == (info.n_samples,)
    if info.task == "binary":
        assert set(np.unique(y).tolist()) == {-1, 1} and y.dtype == np.int64
    elif info.task == "multiclass":
        assert np.unique(y).tolist() == list(range(len(info.classes))) and y.dtype == np.int64
    else:
        assert y.dtype == np.float64
    if not info.sparse:
        assert np.isfinite(X).all()


@needs_data
def test_label_coding_follows_the_registry():
    counts = {"ionosphere": 225, "sonar": 111, "pima": 268, "breast-cancer-wisconsin": 241, "german-numer": 300,
              "spambase": 1813, "australian": 383, "liver-bupa": 200, "splice-libsvm": 517, "svmguide3": 296,
              "a1a": 395, "musk": 207, "phishing": 6157, "retinopathy": 611, "white": 3258}
    for name, n_pos in counts.items():
        _, y = load_dataset(name, download=False)
        assert int((y == 1).sum()) == n_pos, name
    _, y = load_dataset("splice", download=False)
    np.testing.assert_array_equal(np.bincount(y), [767, 768, 1655])  # EI, IE, N
    _, y = load_dataset("ecoli", download=False)
    np.testing.assert_array_equal(np.bincount(y), [143, 77, 2, 2, 35, 20, 5, 52])  # declared order
    _, y = load_dataset("vowel", download=False)
    np.testing.assert_array_equal(np.bincount(y), [90] * 11)


@needs_data
def test_breast_cancer_wisconsin_cleanup():
    raw, _ = read_csv_dataset(Path(DATA) / "uci/breast-cancer-wisconsin.data", id_column=0)
    X, _ = load_dataset("breast-cancer-wisconsin", download=False)
    miss = np.isnan(raw)
    assert miss.sum() == 16 and set(np.nonzero(miss)[1]) == {5}
    np.testing.assert_array_equal(X[~miss], raw[~miss])
    assert (X[miss] == np.median(raw[~miss[:, 5], 5])).all()


@needs_data
def test_splice_encodings():
    Xi, yi = load_dataset("splice", download=False)
    Xo, yo = load_dataset("splice", download=False, encoding="onehot")
    assert Xo.shape == (3190, 240)
    np.testing.assert_array_equal(yi, yo)
    np.testing.assert_allclose(Xo.reshape(3190, 60, 4).sum(-1), 1.0)
    assert set(np.unique(Xi).tolist()) == {0.0, 1.0, 2.0, 3.0, 4.0}
    assert (Xi == 0).sum() == 60                      # the ambiguous letters D, N, R, S
    unambiguous = Xi > 0                               # one-hot and integer codes agree where the letter is known
    np.testing.assert_array_equal(Xo.reshape(3190, 60, 4).argmax(-1)[unambiguous] + 1, Xi[unambiguous])
    Xl, _ = load_dataset("splice-libsvm", download=False, encoding="onehot")
    assert Xl.shape == (1000, 240) and set(np.unique(Xl).tolist()) == {0.0, 1.0}


@needs_data
def test_load_sentiment_paper_setting():
    X, y, toks = load_sentiment("kitchen", target="binary", return_vocabulary=True, download=False)
    assert sp.issparse(X) and len(toks) == 4000
    assert set(np.unique(y).tolist()) == {-1, 1}
    X2, r = load_sentiment("kitchen", download=False)
    np.testing.assert_array_equal(np.where(r >= 4, 1, -1), y)
    assert sorted(np.unique(r).tolist()) == [1.0, 2.0, 4.0, 5.0]
    # stratified by rating: each of the 4 ratings gets its pooled share of the 2000 reviews (+-1)
    pooled = np.concatenate([load_dataset(f"sentiment-kitchen-{s}", download=False)[1] for s in ("train", "test")])
    for v in (1, 2, 4, 5):
        assert abs((r == v).sum() - 2000 * (pooled == v).mean()) <= 1
    Xu, _ = load_sentiment("kitchen", n=300, features="unigrams", max_features=None, download=False)
    assert Xu.shape[0] == 300 and Xu.shape[1] > 1000


def test_load_sentiment_errors_before_any_io(tmp_path):
    with pytest.raises(UnknownDatasetError, match="did you mean 'books'"):
        load_sentiment("book", data_home=tmp_path, download=False)
    with pytest.raises(ValueError, match="'rating' or 'binary'"):
        load_sentiment("books", target="sign", data_home=tmp_path, download=False)


# ---------------------------------------------------------------- readers on tiny files

def test_read_csv_missing_values_id_and_header(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("id,a,b,label\n7,1.5,?,yes\n8, 2 ,3e-1,no\n\n9,?,4,yes\n")
    X, y = read_csv_dataset(p, header="infer", id_column=0)
    np.testing.assert_array_equal(np.isnan(X), [[False, True], [False, False], [True, False]])
    np.testing.assert_allclose(X[1], [2.0, 0.3])
    assert y.tolist() == ["yes", "no", "yes"]
    X2, y2 = read_csv_dataset(p, header=0, label_column="label", id_column="id")
    np.testing.assert_array_equal(X2, X)
    with pytest.raises(ValueError, match=r"'\?' is not a number.*missing="):
        read_csv_dataset(p, header=0, id_column=0, missing=())


def test_read_csv_label_first_numeric_header_and_errors(tmp_path):
    p = tmp_path / "g.csv"
    p.write_text("0,1,2\n+1,0.5,7\n-1,0.25,8\n")
    X, y = read_csv_dataset(p, label_column=0, header=0)
    np.testing.assert_array_equal(X, [[0.5, 7], [0.25, 8]])
    np.testing.assert_array_equal(y, [1.0, -1.0])
    X, _ = read_csv_dataset(p, label_column=0, header="infer")  # a numeric header cannot be inferred
    assert X.shape == (3, 2)
    X, y = read_csv_dataset(p, label_column=None, header=0)
    assert X.shape == (2, 3) and y is None
    (tmp_path / "r.csv").write_text("1,2,3\n4,5\n")
    with pytest.raises(ValueError, match="line 2: 2 fields"):
        read_csv_dataset(tmp_path / "r.csv")
    with pytest.raises(ValueError, match="not a column"):
        read_csv_dataset(p, label_column=5)
    (tmp_path / "m.csv").write_text("1,2,a\n4,5,?\n")
    with pytest.raises(ValueError, match="missing labels"):
        read_csv_dataset(tmp_path / "m.csv")


def test_read_libsvm(tmp_path):
    p = tmp_path / "t.svm"
    p.write_text("+1 1:0.5 3:2\n-1 2:1.5\n+1 1:1\n")
    X, y = read_libsvm(p)
    np.testing.assert_array_equal(X, [[0.5, 0, 2], [0, 1.5, 0], [1, 0, 0]])
    np.testing.assert_array_equal(y, [1, -1, 1])
    X, _ = read_libsvm(p, n_features=5)
    assert X.shape == (3, 5)
    Xs, _ = read_libsvm(p, n_features=5, dense=False)
    assert sp.isspmatrix_csr(Xs) or sp.issparse(Xs)
    with pytest.raises(ValueError, match="n_features"):
        read_libsvm(p, n_features=2)


KEEL = """@relation toy
@attribute size real[0.0,10.0]
@attribute colour {red, green, blue}
@attribute count integer[0,5]
@attribute Class {pos,neg}
@inputs size, colour, count
@outputs Class
@data
1.5, green, 3, pos
2.0, red, <null>, neg
?, blue, 1, pos
"""


def test_read_keel(tmp_path):
    p = tmp_path / "toy.dat"
    p.write_bytes(KEEL.replace("\n", "\r\n").encode())  # KEEL files often have CRLF line ends
    X, y, meta = read_keel(p, return_meta=True)
    np.testing.assert_array_equal(X, [[1.5, 1, 3], [2.0, 0, np.nan], [np.nan, 2, 1]])
    assert y.tolist() == ["pos", "neg", "pos"] and meta["classes"] == ("pos", "neg")
    assert meta["inputs"] == ["size", "colour", "count"] and meta["relation"] == "toy"
    Xr, _ = read_keel(p, nominal="raw")
    assert Xr[:, 1].tolist() == ["green", "red", "blue"] and Xr.dtype == object
    # no @inputs/@outputs lines (and @output singular) are accepted too
    q = tmp_path / "toy2.dat"
    q.write_text(KEEL.replace("@inputs size, colour, count\n", "").replace("@outputs", "@output"))
    X2, y2 = read_keel(q)
    np.testing.assert_array_equal(X2, X)
    r = tmp_path / "bad.dat"
    r.write_text(KEEL.replace("1.5, green", "1.5, purple"))
    with pytest.raises(ValueError, match="'purple' is not a declared value"):
        read_keel(r)


ARFF = """% a comment
@relation toy
@attribute size numeric
@attribute colour {red, green, blue}
@attribute class {yes, no}
@data
1.5,green,yes
?,red,no
3,?,yes
"""


def test_read_arff(tmp_path):
    p = tmp_path / "toy.arff"
    p.write_text(ARFF)
    X, y, meta = read_arff(p, return_meta=True)
    np.testing.assert_array_equal(X, [[1.5, 1], [np.nan, 0], [3, np.nan]])
    assert y.tolist() == ["yes", "no", "yes"] and isinstance(y[0], str)  # bytes decoded
    assert meta["classes"] == ("yes", "no")
    Xr, _ = read_arff(p, nominal="raw")
    assert Xr[:, 1].tolist() == ["green", "red", None]
    Xn, yn = read_arff(p, label_column="size")
    np.testing.assert_array_equal(yn, [1.5, np.nan, 3])
    assert Xn.shape == (3, 2)


def test_read_sentiment_shared_vocabulary(tmp_path):
    train, test = tmp_path / "train.gz", tmp_path / "test.gz"
    with gzip.open(train, "wt") as f:
        f.write("good:2 good_book:1 #label#:5.0\nbad:1 not_good:1 good:1 #label#:1.0\n")
    with gzip.open(test, "wt") as f:
        f.write("great:1 good:3 #label#:4.0\n\nbad:2 #label#:2.0\n")
    Xtr, vocab, rtr = read_sentiment(train)
    assert vocab == {"good": 0, "good_book": 1, "bad": 2, "not_good": 3}
    np.testing.assert_array_equal(Xtr.toarray(), [[2, 1, 0, 0], [1, 0, 1, 1]])
    np.testing.assert_array_equal(rtr, [5, 1])
    frozen = dict(vocab)
    Xte, v2, rte = read_sentiment(test, vocabulary=vocab)
    assert v2 == vocab == frozen  # unseen tokens dropped; the caller's vocabulary untouched
    np.testing.assert_array_equal(Xte.toarray(), [[3, 0, 0, 0], [0, 0, 2, 0]])
    np.testing.assert_array_equal(rte, [4, 2])
    Xe, v3, _ = read_sentiment(test, vocabulary=vocab, extend=True)
    assert v3 == {**frozen, "great": 4} and vocab == frozen and Xe.shape == (2, 5)
    plain = tmp_path / "plain.txt"
    plain.write_text("a:1 b:2 #label#:2.0\n")  # not gzipped: also read
    Xp, vp, _ = read_sentiment(plain, vocabulary=["b", "a"])
    np.testing.assert_array_equal(Xp.toarray(), [[2, 1]])
    bad = tmp_path / "bad.gz"
    with gzip.open(bad, "wt") as f:
        f.write("a:1 b:2\n")
    with pytest.raises(ValueError, match="line 1: no '#label#"):
        read_sentiment(bad)


# ---------------------------------------------------------------- helpers; inputs never modified

def test_label_helpers_do_not_modify_inputs():
    y = np.array(["g", "b", "g"])
    y0 = y.copy()
    binary_labels(y, "g")
    codes, classes = class_codes(y)
    np.testing.assert_array_equal(codes, [1, 0, 1])
    assert classes.tolist() == ["b", "g"]
    np.testing.assert_array_equal(y, y0)
    with pytest.raises(ValueError, match="not among the label values"):
        binary_labels(y, "x")
    with pytest.raises(ValueError, match="not in classes"):
        class_codes(y, classes=["g"])


def test_encode_nucleotides():
    S = np.array([["A", "C", "G", "T"], ["D", "N", "R", "S"]], dtype=object)
    S0 = S.copy()
    np.testing.assert_array_equal(encode_nucleotides(S), [[1, 2, 3, 4], [0, 0, 0, 0]])
    E = encode_nucleotides(S, "onehot").reshape(2, 4, 4)
    np.testing.assert_allclose(E[0], np.eye(4))
    np.testing.assert_allclose(E[1], [[1 / 3, 0, 1 / 3, 1 / 3], [.25] * 4, [.5, 0, .5, 0], [0, .5, .5, 0]])
    np.testing.assert_array_equal(S, S0)
    with pytest.raises(ValueError, match="not nucleotide letters"):
        encode_nucleotides(np.array([["A", "X"]]))


def test_subsample_stratified_reproducible_and_non_mutating():
    rng = np.random.RandomState(0)
    X = rng.randn(1000, 3)
    y = np.where(rng.rand(1000) < 0.3, 1, -1)
    X0, y0 = X.copy(), y.copy()
    Xs, ys, idx = subsample(X, y, 100, random_state=3, return_index=True)
    assert Xs.shape == (100, 3) and len(set(idx.tolist())) == 100
    assert abs((ys == 1).sum() - 100 * (y == 1).mean()) <= 1
    np.testing.assert_array_equal(Xs, X[idx])
    np.testing.assert_array_equal(subsample(X, y, 100, random_state=3)[0], Xs)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(y, y0)
    Xsp, ysp = subsample(sp.csr_matrix(X), y, 50, random_state=0, stratify=False)
    assert sp.issparse(Xsp) and Xsp.shape == (50, 3)
    yr = rng.randn(1000)  # continuous target: every value its own stratum -> a simple random sample
    assert subsample(X, yr, 10)[0].shape == (10, 3)
    Xa, _ = subsample(X, y, 1000)
    assert sorted(map(tuple, Xa)) == sorted(map(tuple, X))
    with pytest.raises(ValueError, match=r"\[1, 1000\]"):
        subsample(X, y, 1001)
    with pytest.raises(ValueError, match="one entry per row"):
        subsample(X, y[:10], 5)

