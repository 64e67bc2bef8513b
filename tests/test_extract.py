"""Extraction cues, pinned on small sentences written for the tests (not from the dev abstracts)."""
import json
import re

import pytest
import spacy

from kg.extract import extract_text
from kg.extract.abbreviations import find_abbreviations, is_short_form


def names(ex, type_, role=None):
    return [e.name for e in ex.of(type_, role)]


def all_forms(ex, type_, role=None):
    return {f for e in ex.of(type_, role) for f in (e.name, *e.aliases)}


# ------------------------------------------------------------------ abbreviations (pure function)

@pytest.mark.parametrize("text,pair", [
    ("We rely on the Sparse Mixture Router (SMR) in all runs.", ("Sparse Mixture Router", "SMR")),
    ("Results on the Open Catalyst Project (OCP) are strong.", ("Open Catalyst Project", "OCP")),
    ("A graph-based token merging (GTM) step is added.", ("graph-based token merging", "GTM")),
    ("The wavelet kernel network (WK-Net) is small.", ("wavelet kernel network", "WK-Net")),
])
def test_find_abbreviations_on_blank_pipeline(text, pair):
    doc = spacy.blank("en")(text)
    assert [(l.text, s.text) for l, s in find_abbreviations(doc)] == [pair]


@pytest.mark.parametrize("text", [
    "This holds (see below) in general.",
    "It was shown before (Smith 2020) that it fails.",
    "Accuracy improves (e.g., on small data) a lot.",
])
def test_parentheses_that_are_not_abbreviations(text):
    assert find_abbreviations(spacy.blank("en")(text)) == []


def test_short_form_filter():
    assert is_short_form("GNN") and is_short_form("s-OTDD")
    assert not is_short_form("2021") and not is_short_form("i.e.") and not is_short_form("x")


# ------------------------------------------------------------------ proposal cues

@pytest.mark.parametrize("text,name", [
    ("In this paper we propose QuillNet, a lightweight model for text deblurring.", "QuillNet"),
    ("We introduce MorphoGAN to synthesize cell images.", "MorphoGAN"),
    ("Here we present a new method, SPARKLE, that prunes attention heads.", "SPARKLE"),
    ("We design a sampler, termed ZipSampler, for long videos.", "ZipSampler"),
    ("A simple estimator called KernelTrace2 is derived.", "KernelTrace2"),
    ("The resulting approach, dubbed HyperLoRA-X, is fast.", "HyperLoRA-X"),
    ("FlowMatcher, a novel generative model, is trained on molecules.", "FlowMatcher"),
    ("Our method, TinySeg, runs on phones.", "TinySeg"),
])
def test_proposal_cues(text, name):
    from tests.test_cues import rule_forms

    assert name.lower() in rule_forms(text, ("kg_proposed",))


@pytest.mark.parametrize("title,abstract,expected", [
    ("TerraSeg: Weakly Supervised Segmentation of Aerial Images",
     "Semantic segmentation of aerial images is costly to annotate. We propose TerraSeg, a weakly supervised "
     "segmentation network trained with image-level labels. TerraSeg outperforms DeepLabv3+ on the ISPRS "
     "Potsdam and LoveDA datasets.",
     {("Method", "proposed", "TerraSeg"), ("Method", "used", "DeepLabv3+"), ("Dataset", "", "LoveDA"),
      ("Task", "", "semantic segmentation")}),
    (None,
     "We use the EM algorithm to fit a Gaussian mixture model to the data, and Monte Carlo sampling to "
     "estimate the likelihood.",
     {("Method", "used", "Gaussian mixture model")}),
])
def test_realistic_abstracts(title, abstract, expected):
    """Abstracts written for this test, in the phrasing of real ones: the paper's own
    method is proposed, the methods and datasets it uses are found, generic methods it
    uses are not proposals."""
    ex = extract_text(abstract, title=title)
    assert expected <= {(e.type, e.role, e.name) for e in ex.entities}
    assert not any(e.role == "proposed" and e.name in ("EM algorithm", "Monte Carlo sampling", "DeepLabv3+")
                   for e in ex.entities)


def test_acronym_definition_after_proposal_verb_links_expansion():
    ex = extract_text("We propose the Adaptive Spectral Pooling Network (ASPN) for point clouds. ASPN is fast.")
    (ent,) = ex.of("Method", "proposed")
    assert {ent.name, *ent.aliases} == {"ASPN", "Adaptive Spectral Pooling Network"}
    # Every occurrence is a mention, with offsets that point at the text.
    text = "We propose the Adaptive Spectral Pooling Network (ASPN) for point clouds. ASPN is fast."
    assert sum(1 for m in ent.mentions if m.text == "ASPN") == 2
    assert all(text[m.start:m.end] == m.text for m in ent.mentions)


def test_an_acronym_two_names_could_expand_joins_neither():
    ex = extract_text("We study representation learning in reinforcement learning and show that RL agents "
                      "with learned representations generalize.")
    names = [{e.name, *e.aliases} for e in ex.entities]
    assert not any({"representation learning", "reinforcement learning"} <= forms for forms in names)
    assert not any("RL" in forms and len(forms) > 1 for forms in names)


@pytest.mark.parametrize("text", [
    "We analyze TD(λ) with linear function approximation and prove a rate of O(1/T) for P_X and n_2 samples on MNIST.",
    "We prove a regret of O(1/\\sqrt{T}) for online gradient descent with step size eta=1/t on ImageNet.",
    "Data and code: https://huggingface.co/datasets/foo/bar and www.example.org/data for image captioning.",
])
def test_no_name_is_a_formula_fragment_or_a_web_address(text):
    from kg.extract.learned import balanced

    forms = [f for e in extract_text(text).entities for f in (e.name, *e.aliases)]
    assert forms  # the real names are still found
    assert all(balanced(f) and not re.search(r"=|_[A-Za-z0-9]\b|://|^www\.", f) for f in forms), forms


def test_generic_descriptions_are_not_names():
    ex = extract_text("We propose a novel framework for robust training of deep networks.")
    assert ex.of("Method", "proposed") == []
    ex = extract_text("We propose a simple method for LLMs that improves recall.")
    assert ex.of("Method", "proposed") == []


def test_broad_fields_are_never_names():
    ex = extract_text("Machine learning and deep learning now drive computer vision; we apply machine learning "
                      "to image classification on MNIST.", title="Machine Learning for Vision")
    names = {f.lower() for e in ex.entities for f in (e.name, *e.aliases)}
    assert not names & {"machine learning", "deep learning", "computer vision"}, names


def test_title_name_before_colon():
    ex = extract_text("We study cache eviction for transformers.", title="KVDrop: Dropping Keys Early")
    (ent,) = ex.of("Method", "proposed")
    assert ent.name == "KVDrop"
    (m,) = ent.mentions
    assert m.source.endswith("@title") and (m.start, m.end) == (0, 6)


def test_a_name_is_proposed_or_used_never_both():
    ex = extract_text("We propose GridFormer. Unlike prior GridFormer variants, GridFormer uses ImageNet.")
    roles = {e.role for e in ex.entities if e.name == "GridFormer"}
    assert roles == {"proposed"}
    assert not (all_forms(ex, "Method", "proposed") & all_forms(ex, "Method", "used"))


# ------------------------------------------------------------------ gazetteers and github

def test_gazetteer_tasks_and_datasets():
    ex = extract_text("We evaluate on semantic segmentation and image classification using CIFAR-10 and ImageNet.")
    assert {"semantic segmentation", "image classification"} <= {n.lower() for n in names(ex, "Task")}
    assert {"CIFAR-10", "ImageNet"} <= set(names(ex, "Dataset"))


def test_github_in_extraction_and_json_contract():
    text = r"Code: \url{https://github.com/some-lab/QuillNet}. We propose QuillNet."
    ex = extract_text(text, doc_id="f.txt#3")
    obj = ex.to_json()
    assert obj["github"] == ["https://github.com/some-lab/QuillNet"]
    assert set(obj) == {"doc", "methods_proposed", "methods_used", "tasks", "datasets", "github", "mentions"}
    assert obj["doc"] == "f.txt#3"
    gh = [m for m in obj["mentions"] if m["type"] == "CodeRepository"]
    assert gh and text[gh[0]["start"]:gh[0]["end"]] == "https://github.com/some-lab/QuillNet"
    json.dumps(obj)  # serializable


def test_mentions_have_sentence_and_component():
    ex = extract_text("Images matter. We introduce PixelHop2 for denoising.")
    (ent,) = ex.of("Method", "proposed")
    (m,) = ent.mentions
    assert m.sentence == "We introduce PixelHop2 for denoising."
    assert m.source == "kg_learned_proposed" and m.role == "proposed"


def test_occurrences_match_the_word_bounded_regex():
    # the str.find search must find exactly what the regex it replaced finds
    import random
    import re

    from kg.text import occurrences

    rng = random.Random(7)
    alphabet = ["GAN", "gan", "Net", "net", "-", "_", " ", ",", "a", "A", "1", ".", "é", "İ", "K"]
    forms = ["GAN", "gan", "Net", "a", "GAN-Net", "net a", "aa", "1a", "é", "K", "İ"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        form = rng.choice(forms)
        flags = 0 if any(c.isupper() for c in form) else re.IGNORECASE
        expected = [m.span() for m in re.finditer(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", text, flags)]
        folded = text.lower() if text.isascii() else None
        assert occurrences(form, text, folded) == expected, (form, text)
        start = rng.randint(0, len(text))  # from an offset, case-insensitive, first only
        m = re.compile(r"(?<![\w-])" + re.escape(form) + r"(?![\w-])", re.IGNORECASE).search(text, start)
        assert occurrences(form, text, folded, start, ignore_case=True, first=True) == ([m.span()] if m else []), \
            (form, text, start)


_TOKEN_TEXTS = ["TAROT: Targeted Data Selection.\nWe propose TAROT, e.g. for networks\tand studies of LLMs.",
                "Dataset\u00a0names (e.g., CIFAR-10) and n't and y'all.\n\nTwo  spaces, analyses, losses.", ""]


def test_pipeline_tokenizer_matches_spacy_rules_and_sets_singular_norms():
    from kg.extract import make_nlp
    from kg.text import singular

    nlp = make_nlp(model=None)
    # spaCy stops caching a text once a special case occurs; the whitespace rules that
    # only repeat their text are dropped, and tokens must stay what full rules give.
    assert "\n" not in nlp.tokenizer.rules and "e.g." in nlp.tokenizer.rules and "\u00a0" in nlp.tokenizer.rules
    full = spacy.blank("en").tokenizer
    full.infix_finditer, full.prefix_search, full.suffix_search = (
        nlp.tokenizer.infix_finditer, nlp.tokenizer.prefix_search, nlp.tokenizer.suffix_search)
    norms = nlp.get_pipe("kg_token_norm")
    for text in _TOKEN_TEXTS:
        ours = norms(nlp.make_doc(text))
        assert [(t.text, t.idx, t.whitespace_) for t in ours] == [(t.text, t.idx, t.whitespace_) for t in full(text)]
        assert [t.norm_ for t in ours] == [singular(t.lower_) for t in ours]


def test_corpus_name_finder_matches_a_scan_of_every_word():
    # The finder looks up only the words that begin a form; it must find what the
    # scan over every word of the text found (the loop it replaced).
    import random
    import re

    from kg.extract.propagate import Finder

    word = re.compile(r"[\w][\w-]*")

    def scan(finder, text):
        pos, out = 0, []
        for m in word.finditer(text):
            if m.start() < pos or (m.start() > 0 and text[m.start() - 1] in "-_"):
                continue
            for form in finder.by_first.get(m.group(0), ()):
                end = m.start() + len(form)
                if text.startswith(form, m.start()) and (end == len(text) or not (text[end].isalnum() or text[end] in "-_")):
                    out.append((m.start(), end, form))
                    pos = end
                    break
        return out

    rng = random.Random(11)
    alphabet = ["GSU", "Net", "net", "-", "_", " ", ",", "a", "1", ".", "Gated", "Unit", "é", "("]
    for _ in range(3000):
        forms = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 5))}
        finder = Finder(forms)
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 16)))
        assert list(finder.finditer(text)) == scan(finder, text), (sorted(forms), text)


def test_token_texts_are_the_tokens_text_and_lower_case():
    from kg.extract import make_nlp
    from kg.extract.tokens import token_texts

    nlp = make_nlp(model=None)
    for text in _TOKEN_TEXTS + ["Ünïcode İstanbul ΣΑΣ straße café (CAFÉ) x\u200by"]:
        doc = nlp.make_doc(text)
        assert token_texts(doc) == ([t.text for t in doc], [t.lower_ for t in doc])


@pytest.mark.parametrize("text, tokens", [
    # a size or a count stays in its name (spaCy's unit rule would cut "ADE20" "K")
    ("on ADE20K, Human3.6M and LAION-400M", ["on", "ADE20K", ",", "Human3.6M", "and", "LAION-400M"]),
    # the full stop after a name that ends in a capital is not part of it
    ("with Mistral 7B. Then XLM-R. And MoS.", ["with", "Mistral", "7B", ".", "Then", "XLM-R", ".", "And", "MoS", "."]),
    # abbreviations keep theirs, and "%" is still its own token
    ("the U.S. rate (10%)", ["the", "U.S.", "rate", "(", "10", "%", ")"]),
])
def test_names_with_sizes_are_one_token(text, tokens):
    from kg.extract import make_nlp

    assert [t.text for t in make_nlp(model=None).make_doc(text)] == tokens


def test_a_size_at_the_end_of_a_sentence_is_no_name():
    ex = extract_text("We fine-tune Llama-2 7B and Mistral 7B. Our method, QuillNet, improves both.")
    assert not [e.name for e in ex.entities if e.name.endswith(".") or e.name in ("7B", "7B.")]


# ------------------------------------------------------------------ titled records

def test_a_titled_records_first_sentence_keeps_its_proposal():
    title = "Stochastic Optimization with Arbitrary Choice Sets"
    abstract = ("We propose StoROO, a stochastic optimization algorithm for problems whose feasible set is "
                "chosen by an adversary. StoROO matches the best known regret bounds.")
    ex = extract_text(abstract, title=title)
    assert "StoROO" in names(ex, "Method", "proposed")
    (ent,) = [e for e in ex.entities if e.name == "StoROO"]
    assert all(abstract[m.start:m.end] == "StoROO" for m in ent.mentions if not m.source.endswith("@title"))


def test_title_is_its_own_sentence():
    ex = extract_text("We propose QuillNet for text deblurring.", title="Deblurring Text Images")
    for m in ex.mentions:
        assert "\n" not in m.sentence and not (m.sentence.startswith("Deblurring") and "QuillNet" in m.sentence)


def test_only_distinctive_names_travel_to_other_papers():
    from kg.model import DocEntity, Extraction, Mention
    from kg.extract.propagate import build_lexicon

    def proposed(name, *aliases):
        m = Mention(name, "Method", 0, len(name), role="proposed", source="kg_learned_proposed")
        return DocEntity("Method", name, aliases, "proposed", (m,))

    lex = build_lexicon([Extraction("a", (proposed("Gated Spectral Unit", "GSU"), proposed("natural language"),
                                          proposed("Deep Learning")))])
    assert set(lex) == {"Gated Spectral Unit", "GSU"}


def test_a_title_naming_the_proposal_in_full_joins_the_abstracts_short_name():
    # the title says the method's long name, the abstract proposes it under another
    ex = extract_text("Multi-object tracking fails when detectors miss objects. We propose DFR-FastMOT, a light "
                      "tracker that keeps tracks alive through detection failures using appearance memory. "
                      "DFR-FastMOT runs at 30 frames per second on MOT17 and improves HOTA over ByteTrack.",
                      title="Detection Failure Resistant Tracker for Crowded Scenes")
    proposed = [e for e in ex.entities if e.role == "proposed"]
    assert len(proposed) == 1 and proposed[0].name == "DFR-FastMOT"
    assert "Detection Failure Resistant Tracker" in proposed[0].aliases


def test_the_pipeline_declares_what_each_component_sets_and_reads():
    from kg.extract import make_nlp

    nlp = make_nlp(model=None)
    analysis = nlp.analyze_pipes()
    assert not any(analysis["problems"].values())
    for name in nlp.pipe_names[1:]:
        assert analysis["summary"][name]["assigns"], name
    # the rules' span groups are settings: the classifier reads the ones it is told
    assert nlp.get_pipe_config("kg_gazetteer")["spans_key"] in nlp.get_pipe_config("kg_span_classifier")["rule_keys"]
    doc = nlp.get_pipe("kg_gazetteer")(nlp.get_pipe("kg_token_norm")(nlp.make_doc("We train ResNet on ImageNet.")))
    assert [s.text for s in doc.spans["kg_gazetteer"]] == ["ResNet", "ImageNet"]


def test_a_span_classifier_without_a_model_says_so():
    from kg.extract import make_nlp

    nlp = make_nlp(model=None)
    with pytest.raises(ValueError, match="no model"):
        nlp("We propose FooNet.")
