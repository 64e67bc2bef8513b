"""Each cue family of extraction, pinned on sentences written for the tests
(none copied from the dev abstracts). Where a test reads the rules' own marks
(``rule_forms``), it pins a rule component: its marks are features of the trained span
classifier, which decides what the extraction keeps (its quality is measured by
cross-validation, ``scripts/evaluate.py``, not on single sentences)."""
import pytest

from kg.extract import extract_records, extract_text
from kg.model import Record


def forms(ex, type_, role=None):
    return {f.lower() for e in ex.of(type_, role) for f in (e.name, *e.aliases)}


def rule_forms(text, groups, label=None, title=None):
    """What the rule components mark (their marks are features of the span classifier,
    which decides): the lower-case texts of the spans of ``groups``."""
    from kg.extract import _TITLE_SEP, get_nlp

    nlp = get_nlp()
    full, tlen = (title + _TITLE_SEP + text, len(title) + len(_TITLE_SEP)) if title else (text, 0)
    doc = nlp.make_doc(full)
    doc._.kg_title_len = tlen
    for name, proc in nlp.pipeline:
        if name != "kg_span_classifier":
            doc = proc(doc)
    return {s.text.lower() for g in groups for s in doc.spans.get(g, []) if label is None or s.label_ == label}


# ------------------------------------------------------------------ used methods

@pytest.mark.parametrize("text,name", [
    ("Our sampler outperforms HMC-Lite and NUTSX on every target.", "NUTSX"),
    ("Compared with PointMLP2, the error drops by half.", "PointMLP2"),
    ("We fine-tune Llama-3-8B with a small learning rate.", "Llama-3-8B"),
    ("A ResNet-50 backbone is trained with AdamW and label smoothing.", "label smoothing"),
    ("Baselines such as RetroFormer, GraphRetro and MEGAN are compared.", "GraphRetro"),
    ("The encoder uses a Vision Transformer and dropout.", "Vision Transformer"),
])
def test_used_method_cues(text, name):
    ex = extract_text(text)
    assert name.lower() in forms(ex, "Method", "used")
    assert not forms(ex, "Method", "proposed")


def test_metrics_and_generic_acronyms_are_not_methods():
    ex = extract_text("Using LLMs, we improve BLEU and FID over prior work on GPUs.")
    assert not ({"bleu", "fid", "gpus", "llms"} & forms(ex, "Method"))


def test_lexicon_spellings_merge_in_one_abstract():
    ex = extract_text("We train with stochastic gradient descent (SGD). SGD is slow.")
    (sgd,) = [e for e in ex.of("Method") if "SGD" in (e.name, *e.aliases)]
    assert {sgd.name, *sgd.aliases} >= {"SGD", "stochastic gradient descent"}


# ------------------------------------------------------------------ datasets

@pytest.mark.parametrize("text,names", [
    ("We report results on the WaferMap-3 and SolderNet datasets.", {"wafermap-3", "soldernet"}),
    ("Accuracy on the OrbitQA benchmark improves by 4 points.", {"orbitqa"}),
    ("We pretrain on CIFAR-100 and evaluate on Tiny ImageNet.", {"cifar-100", "tiny imagenet"}),
    ("We release the Coral Reef Survey Dataset (CRSD) for segmentation.", {"coral reef survey dataset", "crsd"}),
])
def test_dataset_cues(text, names):
    assert names <= rule_forms(text, ("kg_cues", "kg_gazetteer", "kg_defined"), "Dataset")


def test_unnamed_data_is_not_a_dataset():
    ex = extract_text("We use synthetic data and six real-world datasets from prior benchmarks.")
    assert forms(ex, "Dataset") == set()


# ------------------------------------------------------------------ tasks

@pytest.mark.parametrize("text,task", [
    ("Crop yield forecasting is a key problem for farms.", "crop yield forecasting"),  # sentence subject
    ("We build a tool for wildfire spread prediction.", "wildfire spread prediction"),  # "for X"
    ("Our model improves performance on handwriting recognition.", "handwriting recognition"),  # "performance on X"
    ("The goal of molecule property prediction is hard to reach.", "molecule property prediction"),  # "goal of X"
    ("It helps downstream tasks such as lane detection and road segmentation.", "road segmentation"),  # list
    ("Results on several speech enhancement benchmarks are strong.", "speech enhancement"),  # "X benchmarks"
])
def test_task_cues(text, task):
    assert task in forms(extract_text(text), "Task")


def test_task_verb_phrase_joins_its_nominal_form():
    ex = extract_text("Sensor fault localization matters. We learn to localize sensor faults quickly.")
    (task,) = ex.of("Task")
    assert task.name == "sensor fault localization"
    assert "localize sensor faults" in task.aliases


def test_task_in_title_and_not_in_passing():
    ex = extract_text("We study the problem carefully.", title="Robust Glacier Segmentation from Radar")
    assert "robust glacier segmentation" in forms(ex, "Task") or "glacier segmentation" in forms(ex, "Task")
    ex = extract_text("The resulting representation is stable under noise.")
    assert forms(ex, "Task") == set()


def test_broad_fields_are_not_tasks():
    ex = extract_text("Machine learning and deep learning are used in many fields.")
    assert not ({"machine learning", "deep learning"} & forms(ex, "Task"))


# ------------------------------------------------------------------ proposals (more families)

@pytest.mark.parametrize("text,name", [
    ("We study relay graphs, which we call braided graphs.", "braided graphs"),
    ("The core contribution is Gradient Relay Routing (GRR), a scheduling rule.", "GRR"),
    ("We formalize an estimator that we refer to as the Tilted Ratio Estimator (TRE).", "TRE"),
    ("By introducing Marigold, a novel depth model, we close the gap.", "Marigold"),
])
def test_more_proposal_cues(text, name):
    assert name.lower() in rule_forms(text, ("kg_proposed",))


def test_a_term_used_before_the_proposal_is_not_the_new_name():
    text = ("Federated Feature Screening (FFS) is a common setup. "
            "We propose an FFS framework that cuts communication.")
    assert rule_forms(text, ("kg_proposed",)) == set()


def test_initials_give_the_full_long_form():
    ex = extract_text("We propose residual token pruning (RTP) for vision transformers.")
    assert {"rtp", "residual token pruning"} <= forms(ex, "Method", "proposed")


def test_names_defined_in_one_paper_are_found_in_another():
    recs = [Record("a", "We propose the Gated Spectral Unit (GSU) for audio tagging.", "x", 0),
            Record("b", "Our baseline list contains GSU among others.", "x", 1)]
    _, b = extract_records(recs)
    assert "gsu" in forms(b, "Method", "used")


@pytest.mark.parametrize("title,abstract,expected", [
    ("Position: Benchmarks Should Report Variance", "This position paper argues for variance.", set()),
    ("Salvage: Explaining Classifiers by Removal", "We show that Salvage explains well.", {"salvage"}),
    ("STAMP Your Content: Watermarks for LLMs", "We propose a watermark for text.", {"stamp"}),
    ("QuantSpec: Fast Speculative Decoding", "Decoding is slow.", {"quantspec"}),
    ("Be a Goldfish: Forgetting Bad Tokens", "We study forgetting.", set()),
])
def test_title_prefix_names(title, abstract, expected):
    assert rule_forms(abstract, ("kg_proposed",), title=title) == expected
