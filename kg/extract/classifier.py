"""A softmax classifier over sparse string features, in numpy: a linear part and,
optionally, one hidden layer ("wide and deep").

Small, deterministic and fast to apply. The linear part sums the weights of a candidate's
features; the hidden layer sums the features' embeddings, adds a bias, puts them through
a ReLU and maps the result to the classes, which lets the model learn what one feature
means in the company of another (a name the annotated records know as a used method,
in a sentence that proposes it). Both are added and put through a softmax. Trained by
mini-batch AdaGrad with a fixed seed, the parameters averaged over the second half of
the epochs (less sensitive to the order of the examples); saved the spaCy way, as a
folder (``config.json``, ``features.json``, ``weights.npy`` and, with a hidden layer,
``hidden.npy``, ``hidden_bias.npy``, ``output.npy``, ``output_bias.npy``).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy

CLASSES = ("none", "proposed", "used", "task", "dataset")
_HIDDEN_FILES = ("hidden", "hidden_bias", "output", "output_bias")
CHUNK = 2048  # rows scored at once


class SparseSoftmax:
    def __init__(self, features: dict[str, int] | None = None, weights: numpy.ndarray | None = None,
                 classes: tuple[str, ...] = CLASSES, config: dict | None = None, hidden: tuple | None = None):
        self.classes = tuple(classes)
        self.features = features or {}
        self.weights = weights if weights is not None else numpy.zeros((len(self.features), len(classes)), "float32")
        self.config = dict(config or {})
        # (embeddings: features x units, their bias, units x classes, the classes' bias), or None
        self.hidden = hidden

    # ----------------------------------------------------------------- features

    def index(self, feats: list[str]) -> list[int]:
        get = self.features.get
        return [k for k in (get(f) for f in feats) if k is not None]

    def predict(self, rows: list[list[str]]) -> numpy.ndarray:
        """Class probabilities, one row per feature list (unknown features weigh nothing)."""
        if len(rows) > CHUNK:  # a bounded gather, whatever the length of the record
            return numpy.concatenate([self.predict(rows[a:a + CHUNK]) for a in range(0, len(rows), CHUNK)])
        if not rows:
            return numpy.zeros((0, len(self.classes)), "float32")
        get = self.features.get
        zero = len(self.features)  # the row of zeros after the weights
        flat: list[int] = []
        starts: list[int] = []
        for r in rows:
            starts.append(len(flat))
            flat.extend([get(f, zero) for f in r] or [zero])
        sums = numpy.add.reduceat(self._padded()[flat], starts, axis=0)  # one gather for both parts
        n = len(self.classes)
        logits = sums[:, :n]
        if self.hidden is not None:
            _, b1, w2, b2 = self.hidden
            logits = logits + numpy.maximum(sums[:, n:] + b1, 0) @ w2 + b2
        return _softmax(logits)

    def _padded(self) -> numpy.ndarray:
        """The linear weights and the embeddings side by side, and a row of zeros."""
        if getattr(self, "_pad", None) is None or self._pad.shape[0] != self.weights.shape[0] + 1:
            both = self.weights if self.hidden is None else numpy.hstack([self.weights, self.hidden[0]])
            self._pad = numpy.vstack([both, numpy.zeros((1, both.shape[1]), both.dtype)])
        return self._pad

    # ----------------------------------------------------------------- training

    @classmethod
    def train(cls, rows: list[list[str]], labels: list[int], *, epochs: int = 12, lr: float = 0.3,
              l2: float = 1e-6, min_count: int = 2, batch: int = 256, seed: int = 0, hidden: int = 0,
              hidden_lr: float = 0.05, classes: tuple[str, ...] = CLASSES) -> SparseSoftmax:
        counts: dict[str, int] = {}
        for r in rows:
            for f in set(r):
                counts[f] = counts.get(f, 0) + 1
        features = {f: k for k, f in enumerate(sorted(f for f, c in counts.items() if c >= min_count))}
        config = {"epochs": epochs, "lr": lr, "l2": l2, "min_count": min_count, "batch": batch, "seed": seed}
        if hidden:
            config.update(hidden=hidden, hidden_lr=hidden_lr)
        model = cls(features, classes=classes, config=config)
        idx = [model.index(r) for r in rows]
        y = numpy.asarray(labels, dtype="int64")
        n_classes = len(classes)
        rng = numpy.random.default_rng(seed)
        W = numpy.zeros((len(features), n_classes), "float64")
        deep = []  # embeddings, their bias, the output layer and its bias
        if hidden:
            deep = [rng.normal(0, 0.05, (len(features), hidden)), numpy.zeros(hidden),
                    rng.normal(0, 0.1, (hidden, n_classes)), numpy.zeros(n_classes)]
        params = [W, *deep]
        sq = [numpy.full_like(p, 1e-8) for p in params]  # AdaGrad's sums of squared gradients
        avg = [numpy.zeros_like(p) for p in params]
        averaged = 0
        order = numpy.arange(len(idx))
        eye = numpy.eye(n_classes)
        for epoch in range(epochs):
            rng.shuffle(order)
            for a in range(0, len(order), batch):
                sel = order[a:a + batch]
                rows_b = [idx[k] for k in sel]
                flat, owner = _flatten(rows_b)
                touched, inv = numpy.unique(flat, return_inverse=True)
                logits = _logits(W, flat, owner, len(rows_b))
                if hidden:
                    emb, b1, w2, b2 = deep
                    pre = _logits(emb, flat, owner, len(rows_b)) + b1
                    h = numpy.maximum(pre, 0)
                    logits += h @ w2 + b2
                g = (_softmax(logits) - eye[y[sel]]) / len(rows_b)
                _sparse_step(W, sq[0], touched, inv, g[owner], lr, l2)
                if hidden:
                    gh = (g @ w2.T) * (pre > 0)
                    _sparse_step(emb, sq[1], touched, inv, gh[owner], hidden_lr, l2)
                    for p, s, grad in ((b1, sq[2], gh.sum(0)), (w2, sq[3], h.T @ g), (b2, sq[4], g.sum(0))):
                        s += grad * grad
                        p -= hidden_lr * grad / numpy.sqrt(s)
            if epoch >= epochs // 2:  # the mean of the second half's epochs: steadier than the last
                for m, p in zip(avg, params):
                    m += p
                averaged += 1
        W, *deep = [(m / max(averaged, 1)).astype("float32") for m in avg]
        model.weights = W
        model.hidden = tuple(deep) if hidden else None
        return model

    # ----------------------------------------------------------------- disk

    def to_disk(self, path: str | Path) -> None:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        (path / "config.json").write_text(json.dumps({"classes": list(self.classes), **self.config}, indent=1,
                                                     sort_keys=True) + "\n", encoding="utf-8")
        names = sorted(self.features, key=self.features.get)
        (path / "features.json").write_text(json.dumps(names, ensure_ascii=False, separators=(",", ":")),
                                            encoding="utf-8")
        numpy.save(path / "weights.npy", self.weights, allow_pickle=False)
        for name in _HIDDEN_FILES:
            (path / f"{name}.npy").unlink(missing_ok=True)
        if self.hidden is not None:
            for name, a in zip(_HIDDEN_FILES, self.hidden):
                numpy.save(path / f"{name}.npy", a, allow_pickle=False)

    @classmethod
    def from_disk(cls, path: str | Path) -> SparseSoftmax:
        path = Path(path)
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        names = json.loads((path / "features.json").read_text(encoding="utf-8"))
        weights = numpy.load(path / "weights.npy", allow_pickle=False)
        hidden = None
        if (path / "hidden.npy").exists():
            hidden = tuple(numpy.load(path / f"{name}.npy", allow_pickle=False) for name in _HIDDEN_FILES)
        classes = tuple(config.pop("classes"))
        return cls({f: k for k, f in enumerate(names)}, weights, classes, config, hidden)


def _flatten(rows: list[list[int]]) -> tuple[numpy.ndarray, numpy.ndarray]:
    flat = numpy.fromiter((k for r in rows for k in r), dtype="int64")
    owner = numpy.repeat(numpy.arange(len(rows)), [len(r) for r in rows])
    return flat, owner


def _logits(W: numpy.ndarray, flat: numpy.ndarray, owner: numpy.ndarray, n: int) -> numpy.ndarray:
    """The sums of the rows of ``W`` each example's features pick."""
    out = numpy.zeros((n, W.shape[1]), dtype=W.dtype)
    if len(flat):
        numpy.add.at(out, owner, W[flat])
    return out


def _sparse_step(W, sq, touched, inv, per_feature, lr: float, l2: float) -> None:
    """One AdaGrad step on the rows of ``W`` a batch touched (``per_feature``: the
    gradient of each feature occurrence)."""
    grad = numpy.zeros((len(touched), W.shape[1]))
    numpy.add.at(grad, inv, per_feature)
    grad += l2 * W[touched]
    sq[touched] += grad * grad
    W[touched] -= lr * grad / numpy.sqrt(sq[touched])


def _softmax(z: numpy.ndarray) -> numpy.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = numpy.exp(z)
    return e / e.sum(axis=1, keepdims=True)
