"""A multinomial logistic regression over sparse string features, in numpy.

Small, deterministic and fast to apply: the weights of a candidate's features are summed
and put through a softmax. Trained by mini-batch AdaGrad with a fixed seed, the weights
averaged over the second half of the epochs (less sensitive to the order of the
examples); saved the spaCy way, as a folder (``config.json``, ``features.json``,
``weights.npy``).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy

CLASSES = ("none", "proposed", "used", "task", "dataset")


class SparseSoftmax:
    def __init__(self, features: dict[str, int] | None = None, weights: numpy.ndarray | None = None,
                 classes: tuple[str, ...] = CLASSES, config: dict | None = None):
        self.classes = tuple(classes)
        self.features = features or {}
        self.weights = weights if weights is not None else numpy.zeros((len(self.features), len(classes)), "float32")
        self.config = dict(config or {})

    # ----------------------------------------------------------------- features

    def index(self, feats: list[str]) -> list[int]:
        get = self.features.get
        return [k for k in (get(f) for f in feats) if k is not None]

    def predict(self, rows: list[list[str]]) -> numpy.ndarray:
        """Class probabilities, one row per feature list (unknown features weigh nothing)."""
        if not rows:
            return numpy.zeros((0, len(self.classes)), "float32")
        get = self.features.get
        zero = len(self.features)  # the row of zeros after the weights
        flat: list[int] = []
        starts: list[int] = []
        for r in rows:
            starts.append(len(flat))
            flat.extend([get(f, zero) for f in r] or [zero])
        weights = self._padded()
        return _softmax(numpy.add.reduceat(weights[flat], starts, axis=0))

    def _padded(self) -> numpy.ndarray:
        if getattr(self, "_pad", None) is None or self._pad.shape[0] != self.weights.shape[0] + 1:
            self._pad = numpy.vstack([self.weights, numpy.zeros((1, self.weights.shape[1]), self.weights.dtype)])
        return self._pad

    # ----------------------------------------------------------------- training

    @classmethod
    def train(cls, rows: list[list[str]], labels: list[int], *, epochs: int = 12, lr: float = 0.3,
              l2: float = 1e-6, min_count: int = 2, batch: int = 256, seed: int = 0,
              classes: tuple[str, ...] = CLASSES) -> SparseSoftmax:
        counts: dict[str, int] = {}
        for r in rows:
            for f in set(r):
                counts[f] = counts.get(f, 0) + 1
        features = {f: k for k, f in enumerate(sorted(f for f, c in counts.items() if c >= min_count))}
        model = cls(features, classes=classes, config={"epochs": epochs, "lr": lr, "l2": l2, "min_count": min_count,
                                                       "batch": batch, "seed": seed})
        idx = [model.index(r) for r in rows]
        y = numpy.asarray(labels, dtype="int64")
        W = numpy.zeros((len(features), len(classes)), "float64")
        G = numpy.full_like(W, 1e-8)
        rng = numpy.random.default_rng(seed)
        order = numpy.arange(len(idx))
        eye = numpy.eye(len(classes))
        avg = numpy.zeros_like(W)
        averaged = 0
        for epoch in range(epochs):
            rng.shuffle(order)
            for a in range(0, len(order), batch):
                rows_b = [idx[k] for k in order[a:a + batch]]
                flat, owner = _flatten(rows_b)
                p = _softmax(_logits(W, rows_b))
                g = (p - eye[y[order[a:a + batch]]]) / len(rows_b)
                touched, inv = numpy.unique(flat, return_inverse=True)
                grad = numpy.zeros((len(touched), len(classes)))
                numpy.add.at(grad, inv, g[owner])
                grad += l2 * W[touched]
                G[touched] += grad * grad
                W[touched] -= lr * grad / numpy.sqrt(G[touched])
            if epoch >= epochs // 2:  # the mean of the second half's epochs: steadier than the last
                avg += W
                averaged += 1
        model.weights = (avg / max(averaged, 1)).astype("float32")
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

    @classmethod
    def from_disk(cls, path: str | Path) -> SparseSoftmax:
        path = Path(path)
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        names = json.loads((path / "features.json").read_text(encoding="utf-8"))
        weights = numpy.load(path / "weights.npy", allow_pickle=False)
        classes = tuple(config.pop("classes"))
        return cls({f: k for k, f in enumerate(names)}, weights, classes, config)


def _flatten(rows: list[list[int]]) -> tuple[numpy.ndarray, numpy.ndarray]:
    flat = numpy.fromiter((k for r in rows for k in r), dtype="int64")
    owner = numpy.repeat(numpy.arange(len(rows)), [len(r) for r in rows])
    return flat, owner


def _logits(W: numpy.ndarray, rows: list[list[int]]) -> numpy.ndarray:
    flat, owner = _flatten(rows)
    out = numpy.zeros((len(rows), W.shape[1]), dtype=W.dtype)
    if len(flat):
        numpy.add.at(out, owner, W[flat])
    return out


def _softmax(z: numpy.ndarray) -> numpy.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = numpy.exp(z)
    return e / e.sum(axis=1, keepdims=True)
