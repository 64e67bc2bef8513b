"""Markup in abstracts as published: normalized before extraction, offsets into the original."""
import pytest

from kg.extract import extract_text
from kg.extract.normalize import normalize


@pytest.mark.parametrize("raw, clean", [
    ("We train on <i>ImageNet</i> and <b>COCO</b>.", "We train on ImageNet and COCO."),
    ("a &amp; b &lt; c", "a & b < c"),
    ("the $\\beta$-VAE and $k$-means", "the β-VAE and k-means"),
    ("an $\\ell_1$ penalty", "an ℓ1 penalty"),
    ("rate $O(1/\\sqrt{T})$ holds", "rate § holds"),
    ("the \\emph{Generalized Method of Moments}", "the Generalized Method of Moments"),
    ("the {\\em Geometric Correspondence Constraint (GCC)}.", "the Geometric Correspondence Constraint (GCC)."),
    ("Nos\\'{e}-Poincar\\'{e} dynamics", "Nosé-Poincaré dynamics"),
    ("princi(cid:173)ples", "principles"),
    ("con-\nvolutional networks", "convolutional networks"),
    ("con- volutional networks", "convolutional networks"),
    ("pre- and post-training", "pre- and post-training"),
    ("a title\nbroken over lines", "a title broken over lines"),
    ("**T2I** models and __X__", "T2I models and X"),
    ("50\\% fewer", "50% fewer"),
    ("plain text stays", "plain text stays"),
    ("\\emphGaussian process and \\textitAppGrad", "Gaussian process and AppGrad"),  # braces lost upstream
    ("the \\sgd macro", "the sgd macro"),
    ("Polyak-\\L{}ojasiewicz", "Polyak-Łojasiewicz"),
    ("image classiﬁcation with ﬂows", "image classification with flows"),
])
def test_markup_is_normalized(raw, clean):
    assert normalize(raw)[0] == clean


@pytest.mark.parametrize("raw, name", [
    ("We evaluate on <i>ImageNet</i> in detail.", "ImageNet"),
    ("We use the {\\em Geometric Correspondence Constraint} here.", "Geometric Correspondence Constraint"),
    ("We study princi(cid:173)pal component analysis here.", "principal component analysis"),
    ("We compare with $\\beta$-VAE models.", "β-VAE"),
    ("We study image classiﬁcation here.", "image classification"),
])
def test_offsets_point_into_the_original_text(raw, name):
    clean, offsets = normalize(raw)
    start = clean.index(name)
    s, e = offsets.span(start, start + len(name))
    original = raw[s:e]
    assert normalize(original)[0] == name
    assert original.startswith(name[:1]) or original.startswith("$")


def test_untouched_text_has_no_offset_map():
    assert normalize("We propose FSL-Net for feature shift localization.") == (
        "We propose FSL-Net for feature shift localization.", None)


def test_extracted_mentions_point_into_the_abstract_as_given():
    abstract = ("We propose the <b>Gated Spectral Unit</b> (GSU), trained on {\\em ImageNet} "
                "with a $\\mathcal{O}(n^2)$ cost, and compare it with ResNet-50 on CIFAR-10.")
    ex = extract_text(abstract)
    assert ex.mentions
    for m in ex.mentions:
        raw = abstract[m.start:m.end]
        assert normalize(raw)[0].strip() == m.text, (m, raw)
        assert "<" not in m.text and "{" not in m.text and "$" not in m.text


def test_no_formula_fragment_becomes_a_name():
    ex = extract_text("We prove a regret of $O(1/\\sqrt{T})$ for online learning with $\\epsilon$-greedy exploration.",
                      title="$\\mathcal{X}$-Armed Bandits: Optimizing Quantiles, CVaR and Other Risks")
    for ent in ex.entities:
        for form in (ent.name, *ent.aliases):
            assert not any(c in form for c in "${}\\§"), form


def test_a_formula_glued_to_a_word_stays_out_of_the_name():
    ex = extract_text("We compare RL$^{2}$ with MAML on Omniglot.")
    forms = {f for e in ex.entities for f in (e.name, *e.aliases)}
    assert not any("§" in f for f in forms), forms
