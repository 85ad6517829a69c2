"""Data shared by the benchmark scripts that run on Liu et al. 2017's Table 1 sets (pep.py, classic_mkl.py)."""
from mklbook.pep_experiments import FullStack, load_pep_set
from mklbook.protocol import RandomSplits


def training_half(name: str):
    """`(X_train, y_train, K_train)`: the training half (random, seed 0) of a Table 1 set and its 41-kernel stack
    (Liu et al. 2017's bank, each kernel at trace m), as `benchmarks/pep.py` and `benchmarks/classic_mkl.py` time them."""
    X, y = load_pep_set(name)
    sp = RandomSplits(n_splits=1, test_size=0.5, random_state=0).splits(X, y)[0]
    Ktr, _ = FullStack(X).train_test(sp.train)
    return X[sp.train], y[sp.train], Ktr
