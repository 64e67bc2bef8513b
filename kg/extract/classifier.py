"""A softmax classifier over sparse string features, in numpy: a linear part and,
optionally, one hidden layer ("wide and deep").

Small, deterministic and fast to apply. The linear part sums the weights of a candidate's
features; the hidden layer sums the features' embeddings, adds a bias, puts them through
a ReLU and maps the result to the classes, which lets the model learn what one feature
means in the company of another (a name the annotated records know as a used method,
in a sentence that proposes it). Both are added and put through a softmax. Trained by
mini-batch AdaGrad with a fixed seed, the parameters averaged over the second half of
the epochs (less sensitive to the order of the examples). Several models trained in
different orders make one (:meth:`SparseSoftmax.ensemble`: the mean of their logits).
Saved the spaCy way, as a folder (``config.json``, ``features.json``, ``weights.npy``
and, with a hidden layer, ``hidden.npy`` with ``hidden_scale.npy`` (the feature
embeddings in int8), ``hidden_bias.npy``, ``output.npy``, ``output_bias.npy``).
"""
from __future__ import annotations

import json
from itertools import chain, repeat
from pathlib import Path

import numpy
import scipy.sparse

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
        return self.probabilities(self.vectors(rows))

    def vectors(self, rows: list[list[str]]) -> numpy.ndarray:
        """Each feature list's sum of weights and embeddings (what :meth:`probabilities`
        reads), as one sparse product: a row a list, a one for each of its features."""
        if len(rows) > CHUNK:  # a bounded product, whatever the length of the record
            return numpy.concatenate([self.vectors(rows[a:a + CHUNK]) for a in range(0, len(rows), CHUNK)])
        pad = self._padded()
        zero = len(self.features)  # the row of zeros after the weights
        ends = numpy.cumsum([0, *map(len, rows)])
        flat = numpy.fromiter(map(self.features.get, chain.from_iterable(rows), repeat(zero)), dtype="int64",
                              count=int(ends[-1]))
        ones = numpy.ones(len(flat), pad.dtype)
        return scipy.sparse.csr_matrix((ones, flat, ends), shape=(len(rows), len(pad))) @ pad

    def probabilities(self, sums: numpy.ndarray) -> numpy.ndarray:
        """Class probabilities from :meth:`vectors` (or sums of them)."""
        n = len(self.classes)
        logits = sums[:, :n]
        if self.hidden is not None:
            _, b1, w2, b2 = self.hidden
            logits = logits + numpy.maximum(sums[:, n:] + b1, 0) @ w2 + b2
        return _softmax(logits)

    def _padded(self) -> numpy.ndarray:
        """The linear weights and the embeddings side by side in one table, and a row of
        zeros after them (for an unknown feature). The model's own arrays become views
        of the table, so that the parameters are held once."""
        pad = getattr(self, "_pad", None)
        if pad is None or self.weights.base is not pad or (self.hidden is not None and self.hidden[0].base is not pad):
            n = self.weights.shape[1]
            width = n + (0 if self.hidden is None else self.hidden[0].shape[1])
            pad = numpy.zeros((self.weights.shape[0] + 1, width), self.weights.dtype)
            pad[:-1, :n] = self.weights
            self.weights = pad[:-1, :n]
            if self.hidden is not None:
                pad[:-1, n:] = self.hidden[0]
                self.hidden = (pad[:-1, n:], *self.hidden[1:])
            self._pad = pad
        return pad

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
        batches = _Rows([model.index(r) for r in rows], len(features))
        y = numpy.asarray(labels, dtype="int64")
        n_classes = len(classes)
        rng = numpy.random.default_rng(seed)
        pad = len(features)  # a row of zeros that stands in for an example without features
        W = numpy.zeros((pad + 1, n_classes), "float64")
        deep = []  # embeddings, their bias, the output layer and its bias
        if hidden:
            deep = [numpy.vstack([rng.normal(0, 0.05, (pad, hidden)), numpy.zeros((1, hidden))]), numpy.zeros(hidden),
                    rng.normal(0, 0.1, (hidden, n_classes)), numpy.zeros(n_classes)]
        params = [W, *deep]
        sq = [numpy.full_like(p, 1e-8) for p in params]  # AdaGrad's sums of squared gradients
        avg = [numpy.zeros_like(p) for p in params]
        averaged = 0
        order = numpy.arange(len(rows))
        eye = numpy.eye(n_classes)
        for epoch in range(epochs):
            rng.shuffle(order)
            for a in range(0, len(order), batch):
                sel = order[a:a + batch]
                flat, starts, owner = batches.take(sel)
                groups = _Groups(flat)
                logits = _sums(W, flat, starts)
                if hidden:
                    emb, b1, w2, b2 = deep
                    pre = _sums(emb, flat, starts) + b1
                    h = numpy.maximum(pre, 0)
                    logits += h @ w2 + b2
                g = (_softmax(logits) - eye[y[sel]]) / len(sel)
                _sparse_step(W, sq[0], groups, g[owner], lr, l2)
                if hidden:
                    gh = (g @ w2.T) * (pre > 0)
                    _sparse_step(emb, sq[1], groups, gh[owner], hidden_lr, l2)
                    emb[pad] = 0  # the stand-in for no features stays zero
                    for p, s, grad in ((b1, sq[2], gh.sum(0)), (w2, sq[3], h.T @ g), (b2, sq[4], g.sum(0))):
                        s += grad * grad
                        p -= hidden_lr * grad / numpy.sqrt(s)
                W[pad] = 0
            if epoch >= epochs // 2:  # the mean of the second half's epochs: steadier than the last
                for m, p in zip(avg, params):
                    m += p
                averaged += 1
        W, *deep = [(m / max(averaged, 1)).astype("float32") for m in avg]
        model.weights = W[:pad]
        if hidden:
            deep[0] = deep[0][:pad]
        model.hidden = tuple(deep) if hidden else None
        return model

    @classmethod
    def ensemble(cls, members: list[SparseSoftmax]) -> SparseSoftmax:
        """One model whose logits are the mean of the members' (trained on the same rows,
        so with the same features): the linear weights averaged, the hidden layers side
        by side with their output weights scaled by ``1 / len(members)``. Steadier than
        any one member, and applied as one model."""
        first, n = members[0], len(members)
        weights = (sum(m.weights.astype("float64") for m in members) / n).astype(first.weights.dtype)
        hidden = None
        if first.hidden is not None:
            hidden = (numpy.hstack([m.hidden[0] for m in members]), numpy.concatenate([m.hidden[1] for m in members]),
                      numpy.vstack([m.hidden[2] for m in members]) / n,
                      sum(m.hidden[3].astype("float64") for m in members) / n)
            hidden = tuple(a.astype(first.weights.dtype) for a in hidden)
        return cls(first.features, weights, first.classes, {**first.config, "members": n}, hidden)

    def quantized(self) -> SparseSoftmax:
        """The same model with its feature embeddings rounded to 255 levels per hidden
        unit, as they are saved (``hidden.npy`` in int8, ``hidden_scale.npy``): a quarter
        of the size on disk. Training ends with it, so that a model scores the same
        before it is saved and after it is read."""
        if self.hidden is None:
            return self
        q, scale = _int8(self.hidden[0])
        return SparseSoftmax(self.features, self.weights, self.classes, self.config,
                             ((q * scale).astype(self.weights.dtype), *self.hidden[1:]))

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
        (path / "hidden_scale.npy").unlink(missing_ok=True)
        if self.hidden is not None:
            q, scale = _int8(self.hidden[0])
            numpy.save(path / "hidden_scale.npy", scale, allow_pickle=False)
            for name, a in zip(_HIDDEN_FILES, (q, *self.hidden[1:])):
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
            if (path / "hidden_scale.npy").exists():  # embeddings saved in int8 (:meth:`quantized`)
                scale = numpy.load(path / "hidden_scale.npy", allow_pickle=False)
                hidden = ((hidden[0] * scale).astype(weights.dtype), *hidden[1:])
        classes = tuple(config.pop("classes"))
        return cls({f: k for k, f in enumerate(names)}, weights, classes, config, hidden)


def _starts(lengths) -> numpy.ndarray:
    """Where each of consecutive runs of these lengths starts."""
    starts = numpy.zeros(len(lengths), dtype="int64")
    numpy.cumsum(lengths[:-1], out=starts[1:])
    return starts


class _Rows:
    """The feature indices of all examples in one array, and a batch of them taken out
    (an example without features stands on ``pad``, a row of zeros)."""

    def __init__(self, rows: list[list[int]], pad: int):
        self.lengths = numpy.array([len(r) or 1 for r in rows], dtype="int64")
        self.offsets = _starts(self.lengths)
        self.flat = numpy.fromiter((k for r in rows for k in (r or (pad,))), dtype="int64",
                                   count=int(self.lengths.sum()))

    def take(self, sel: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray, numpy.ndarray]:
        """The batch's indices in one array, where each example starts in it, and the
        example of each entry."""
        lengths = self.lengths[sel]
        starts = _starts(lengths)
        owner = numpy.repeat(numpy.arange(len(sel)), lengths)
        at = numpy.arange(int(lengths.sum())) - starts[owner] + self.offsets[sel][owner]
        return self.flat[at], starts, owner


def _sums(W: numpy.ndarray, flat: numpy.ndarray, starts: numpy.ndarray) -> numpy.ndarray:
    """The sums of the rows of ``W`` each example's features pick."""
    return numpy.add.reduceat(W[flat], starts, axis=0)


class _Groups:
    """The distinct features of a batch (``touched``) and how to sum a value of each
    feature occurrence per feature: sorted, then summed by runs (far faster than
    ``numpy.add.at``)."""

    def __init__(self, flat: numpy.ndarray):
        self.order = numpy.argsort(flat, kind="stable")
        ordered = flat[self.order]
        self.starts = numpy.flatnonzero(numpy.r_[True, ordered[1:] != ordered[:-1]])
        self.touched = ordered[self.starts]

    def sum(self, per_occurrence: numpy.ndarray) -> numpy.ndarray:
        return numpy.add.reduceat(per_occurrence[self.order], self.starts, axis=0)


def _sparse_step(W, sq, groups: _Groups, per_feature, lr: float, l2: float) -> None:
    """One AdaGrad step on the rows of ``W`` a batch touched (``per_feature``: the
    gradient of each feature occurrence)."""
    touched = groups.touched
    grad = groups.sum(per_feature) + l2 * W[touched]
    sq[touched] += grad * grad
    W[touched] -= lr * grad / numpy.sqrt(sq[touched])


def _int8(a: numpy.ndarray) -> tuple[numpy.ndarray, numpy.ndarray]:
    """``a`` as int8 and one scale per column, ``a ~ q * scale`` (exactly, for an ``a``
    that is already such a product)."""
    top = numpy.abs(a).max(axis=0) if len(a) else numpy.zeros(a.shape[1], a.dtype)
    scale = numpy.where(top > 0, top / 127, 1).astype(a.dtype)
    return numpy.clip(numpy.rint(a / scale), -127, 127).astype("int8"), scale


def _softmax(z: numpy.ndarray) -> numpy.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = numpy.exp(z)
    return e / e.sum(axis=1, keepdims=True)
