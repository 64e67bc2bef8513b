
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kg.text import find_github, iri_slug, norm_key, normalize_github, squash_spaces


@pytest.mark.parametrize("text,url", [
    (r"Code is at \url{https://github.com/owner-x/Repo.Name}.", "https://github.com/owner-x/Repo.Name"),
    ("see https://github.com/a/b.git, thanks", "https://github.com/a/b"),
    ("(http://www.github.com/Some/thing/tree/main/src)", "https://github.com/Some/thing"),
    ("github.com/org/tool.", "https://github.com/org/tool"),
    ("https://github.com/u/r/", "https://github.com/u/r"),
])
def test_github_urls_are_normalized(text, url):
    (found,) = find_github(text)
    assert found[2] == url
    # The span points at the URL as written, without trailing punctuation.
    assert text[found[0]:found[1]].rstrip("/").lower().endswith(url.split("/", 3)[3].lower().split("/")[-1])


def test_non_repository_github_links_are_ignored():
    assert find_github("https://github.com/topics/nlp and https://example.org/x") == []
    assert normalize_github("not a url") is None


def test_norm_key_merges_case_hyphen_plural():
    assert norm_key("Graph Neural Networks") == norm_key("graph-neural network")
    assert norm_key("Human Protein Atlas") == "human-protein-atlas"


def test_iri_slug_is_safe_for_any_text():
    for text in ["a b", "ü/ñ?#", "x" * 500, "", "<script>"]:
        slug = iri_slug(norm_key(text))
        assert slug and all(c.isalnum() or c in "-%" for c in slug) and len(slug) <= 80


@given(st.text(alphabet=st.sampled_from([" ", "a", "é", "\n", "\t", "\u00a0", "\u2028", "\x1c", "\u3000",
                                         "\u200b", "\x00"]), max_size=12) | st.text(max_size=12))
def test_squash_spaces_is_split_and_join(text):
    assert squash_spaces(text) == " ".join(text.split())
