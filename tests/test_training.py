"""The span classifier: trained on a tiny annotated set, saved and loaded the spaCy way;
the shipped model loads offline and gives the same output on every run."""
import socket

import numpy
import pytest

from kg.extract.classifier import SparseSoftmax
from kg.extract.learned import default_model_path
from kg.extract.pipeline import make_nlp
from kg.extract.training import Gold, cross_validate, parse, predict, train_model, train_roles
from kg.model import Record

#: Sentences written for this test: made-up names in the ordinary phrasings of abstracts.
TINY = [
    ("We propose ZorbNet, a network for leaf counting. ZorbNet is evaluated on the Quuxset dataset.",
     {"methods_proposed": [["ZorbNet"]], "tasks": [["leaf counting"]], "datasets": [["Quuxset"]]}),
    ("We introduce BlipFormer for leaf counting and compare it with ZorbNet on Quuxset.",
     {"methods_proposed": [["BlipFormer"]], "methods_used": [["ZorbNet"]], "tasks": [["leaf counting"]],
      "datasets": [["Quuxset"]]}),
    ("Experiments on Quuxset and Flarbset show that ZorbNet improves stem detection.",
     {"methods_used": [["ZorbNet"]], "tasks": [["stem detection"]], "datasets": [["Quuxset"], ["Flarbset"]]}),
    ("We present GlimNet, trained on Flarbset for stem detection, and compare it with BlipFormer.",
     {"methods_proposed": [["GlimNet"]], "methods_used": [["BlipFormer"]], "tasks": [["stem detection"]],
      "datasets": [["Flarbset"]]}),
    ("Stem detection is hard. We propose TrelNet and test it on Quuxset against GlimNet.",
     {"methods_proposed": [["TrelNet"]], "methods_used": [["GlimNet"]], "tasks": [["stem detection"]],
      "datasets": [["Quuxset"]]}),
    ("Leaf counting matters. We introduce VorpNet, which beats ZorbNet on Flarbset.",
     {"methods_proposed": [["VorpNet"]], "methods_used": [["ZorbNet"]], "tasks": [["leaf counting"]],
      "datasets": [["Flarbset"]]}),
]


def tiny_items():
    items = []
    for k, (text, gold) in enumerate(TINY):
        rec = Record(doc=f"tiny#{k}", abstract=text, source="tiny", index=k)
        items.append(("dev", rec, Gold.from_json({"doc": rec.doc, **gold})))
    return items


@pytest.fixture(scope="module")
def tiny():
    nlp = make_nlp(model=None)
    return nlp, parse(nlp, tiny_items())


def test_the_hidden_layer_learns_what_one_feature_means_beside_another():
    # the class is the exclusive or of two features: no sum of weights gives it
    rng = numpy.random.default_rng(0)
    rows, labels = [], []
    for _ in range(4000):
        a, b = rng.integers(2, size=2)
        rows.append(["b", f"a{a}", f"b{b}", f"noise{rng.integers(20)}"])
        labels.append(1 + (a ^ b))
    test = [["b", f"a{a}", f"b{b}"] for a in (0, 1) for b in (0, 1)]
    want = [1, 2, 2, 1]
    deep = SparseSoftmax.train(rows, labels, epochs=4, hidden=8, classes=("none", "same", "differ"))
    linear = SparseSoftmax.train(rows, labels, epochs=4, classes=("none", "same", "differ"))
    assert deep.predict(test).argmax(1).tolist() == want
    assert linear.predict(test).argmax(1).tolist() != want


def test_an_ensemble_scores_the_mean_of_its_members_logits_and_saves_in_int8(tmp_path):
    rng = numpy.random.default_rng(0)
    rows = [[f"f{int(x)}" for x in rng.integers(0, 300, 12)] for _ in range(2000)]
    labels = rng.integers(0, 5, 2000).tolist()
    members = [SparseSoftmax.train(rows, labels, epochs=2, hidden=8, seed=k) for k in range(3)]
    both = SparseSoftmax.ensemble(members)
    test = rows[:50] + [[], ["unknown"]]
    mean = sum(numpy.log(m.predict(test)) for m in members) / 3
    got = numpy.log(both.predict(test))
    centre = lambda x: x - x.mean(axis=1, keepdims=True)  # a softmax forgets a constant per row
    assert numpy.allclose(centre(got), centre(mean), atol=1e-4)
    # saved with its embeddings in int8 (a quarter of the size); what is read scores as
    # the quantized model did before it was saved, and close to the full one
    q = both.quantized()
    q.to_disk(tmp_path)
    assert numpy.load(tmp_path / "hidden.npy").dtype == numpy.int8
    read = SparseSoftmax.from_disk(tmp_path)
    assert numpy.array_equal(read.predict(test), q.predict(test))
    assert numpy.abs(q.predict(test) - both.predict(test)).max() < 0.01


def test_the_shipped_model_stays_small():
    size = sum(p.stat().st_size for p in default_model_path().rglob("*") if p.is_file())
    assert size <= 60e6, f"the shipped model takes {size / 1e6:.1f} MB"


def test_labels_come_from_the_gold_forms(tiny):
    _, data = tiny
    d = data[0]
    label = dict(zip(d.texts, d.labels))
    assert label["ZorbNet"] == 1 and label["Quuxset"] == 4 and label["leaf counting"] == 3
    assert label["network"] == 0


def test_training_is_deterministic_and_round_trips_through_disk(tiny, tmp_path):
    nlp, data = tiny
    a, lex, n = train_model(data, epochs=3)
    b, _, _ = train_model(data, epochs=3)
    assert n > 0 and a.features == b.features and numpy.array_equal(a.weights, b.weights)
    clf = nlp.get_pipe("kg_span_classifier")
    clf.model, clf.lexicon = a, lex
    clf.to_disk(tmp_path / "model")
    fresh = make_nlp(model=tmp_path / "model").get_pipe("kg_span_classifier")
    assert fresh.model.features == a.features
    assert numpy.array_equal(fresh.model.weights, a.weights)
    assert a.hidden is not None and all(numpy.array_equal(x, y) for x, y in zip(fresh.model.hidden, a.hidden))
    assert all(numpy.array_equal(x, y) for x, y in zip(a.hidden, b.hidden))
    assert fresh.lexicon.to_json() == lex.to_json()


def test_a_model_trained_on_tiny_data_finds_what_it_learned(tiny):
    nlp, data = tiny
    clf = nlp.get_pipe("kg_span_classifier")
    clf.model, clf.lexicon, _ = train_model(data, epochs=20)
    new = parse(nlp, [("dev", Record(doc="new#0", abstract="We evaluate ZorbNet and GlimNet on Quuxset for leaf "
                                     "counting.", source="new", index=0), Gold("new#0"))])
    (ex,) = predict(clf, new)
    found = {(e.type, e.name) for e in ex.entities}
    assert ("Dataset", "Quuxset") in found
    assert ("Method", "ZorbNet") in found and ("Method", "GlimNet") in found


def test_cross_validation_predicts_every_record_once(tiny):
    nlp, data = tiny
    clf = make_nlp(model=None).get_pipe("kg_span_classifier")
    cv = cross_validate(clf, data, folds=2, epochs=2)
    assert sorted(doc for _, doc in cv.preds) == sorted(d.gold.doc for d in data)


def test_the_name_level_model_learns_from_the_folds_and_decides_the_roles(tiny, tmp_path):
    nlp, data = tiny
    clf = make_nlp(model=None).get_pipe("kg_span_classifier")
    cv = cross_validate(clf, data, folds=2, epochs=20)
    assert cv.roles and {y for _, y in cv.roles} == {0, 1}  # names of proposed and of used methods
    clf.model, clf.lexicon, _ = train_model(data, epochs=20)
    clf.roles = train_roles(cv.roles)
    clf.to_disk(tmp_path / "model")
    fresh = make_nlp(model=tmp_path / "model").get_pipe("kg_span_classifier")
    assert fresh.roles is not None and fresh.roles.model.features == clf.roles.model.features
    new = parse(nlp, [("dev", Record(doc="new#0", abstract="We propose KelpNet for leaf counting and compare it "
                                     "with ZorbNet on Quuxset.", source="new", index=0), Gold("new#0"))])

    def roles(threshold):
        fresh.roles.threshold = threshold
        (ex,) = predict(fresh, new)
        return sorted(e.role for e in ex.entities if e.type == "Method")
    # the name-level model, not the span scores, says proposed or used
    assert roles(1.0) == ["used", "used"] and roles(-1.0) == ["proposed", "proposed"]
    # a model saved without one drops the folder of the one before
    fresh.roles = None
    fresh.to_disk(tmp_path / "model")
    assert not (tmp_path / "model" / "roles").exists()


def test_cross_validation_reads_the_fold_models_it_kept(tiny, tmp_path):
    import numpy as np

    nlp, data = tiny
    clf = make_nlp(model=None).get_pipe("kg_span_classifier")
    first = cross_validate(clf, data, folds=2, epochs=2, models=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1"]
    assert cross_validate(clf, data, folds=2, epochs=2, models=tmp_path) == first
    # the run's decision threshold holds, not the one saved with the fold models
    clf.threshold = 1.0
    assert cross_validate(clf, data, folds=2, epochs=2, models=tmp_path) != first
    clf.threshold = 0.5
    # a fold model changed on disk changes that fold's predictions: it is read, not trained again
    np.save(tmp_path / "0" / "weights.npy", np.zeros_like(np.load(tmp_path / "0" / "weights.npy")))
    for name in ("hidden", "output"):
        if (tmp_path / "0" / f"{name}.npy").exists():
            np.save(tmp_path / "0" / f"{name}.npy", np.zeros_like(np.load(tmp_path / "0" / f"{name}.npy")))
    assert cross_validate(clf, data, folds=2, epochs=2, models=tmp_path) != first


@pytest.mark.slow
def test_the_shipped_model_loads_and_runs_without_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("no network in this test")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    assert (default_model_path() / "weights.npy").exists()
    from kg.extract import _first_pass

    text = "We propose GridFormer for semantic segmentation and evaluate it on Cityscapes."
    first = _first_pass([(text, 0)], nlp=make_nlp())[0][0]
    second = _first_pass([(text, 0)], nlp=make_nlp())[0][0]
    assert first == second
    assert {e.type for e in first.entities} >= {"Method", "Dataset"}


def test_gold_reads_only_the_entity_lists_of_optional():
    # optional also holds results: objects whose keys are no names
    gold = Gold.from_json({"doc": "d", "methods_used": [["ResNet"]],
                           "optional": {"methods": [["ViT"]], "tasks": [], "datasets": [["CIFAR-10"]],
                                        "results": [{"value": "85.3%", "kind": "score", "metric": "accuracy",
                                                     "dataset": "CIFAR-10", "method": "ResNet"}]}})
    assert gold.label("ResNet") == 2
    assert gold.label("ViT") is None and gold.label("CIFAR-10") is None
    assert gold.label("value") == 0 and gold.label("metric") == 0



def test_a_feature_list_weighs_the_sum_of_its_known_features(tiny):
    # Each list's sum of weights and embeddings: a feature as often as it occurs, an
    # unknown one nothing, an empty list the zeros; then the hidden layer and softmax.
    model = train_model(tiny[1], epochs=2, hidden=8, members=1)[0]
    known = sorted(model.features)[:6]
    rows = [known[:3], [known[0], known[0], "no such feature"], [], known]
    got = model.vectors(rows)
    pad = numpy.hstack([model.weights, model.hidden[0]])
    want = [sum((pad[model.features[f]] for f in r if f in model.features), numpy.zeros(pad.shape[1])) for r in rows]
    assert numpy.allclose(got, want, atol=1e-6)
    assert numpy.allclose(model.predict(rows), model.probabilities(numpy.asarray(want, "float32")), atol=1e-6)
