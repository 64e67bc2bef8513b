import json
from pathlib import Path

import pytest

from kg.ingest import InputError, parse_venue, read_file, read_records, sample_paths

from .conftest import write


def test_samples_ship_with_the_package_under_their_names():
    names = [p.name for p in sample_paths()]
    assert names == ["000_f72e9bc991a965d2.txt", "001_2069452312283a90.txt",
                     "002_3bf97846584ef6f8.txt", "003_11365987b2cee970.txt"]


def test_seed_files_give_76_records_with_venue_and_ids():
    recs = read_records(sample_paths())
    assert len(recs) == 76
    assert recs[0].doc == "000_f72e9bc991a965d2.txt#0"
    assert recs[19].doc == "001_2069452312283a90.txt#0"
    venues = {r.venue for r in recs}
    assert venues == {"ICML 2025", "ICLR 2025"}
    assert {r.year for r in recs} == {2025}


@pytest.mark.parametrize("header,venue,year", [
    ("ICML 2025 Papers", "ICML 2025", 2025),
    ("ICLR 2025 论文列表", "ICLR 2025", 2025),
    ("NeurIPS 2024 accepted papers", "NeurIPS 2024", 2024),
    ("some abstracts", None, None),
])
def test_parse_venue(header, venue, year):
    assert parse_venue(header) == (venue, year)


def test_seed_text_without_header_and_with_crlf(tmp_path):
    p = write(tmp_path / "x.txt", "First abstract. It has two sentences.\r\n\r\nSecond one here. Yes.\r\n")
    recs = read_file(p)
    assert [r.doc for r in recs] == ["x.txt#0", "x.txt#1"]
    assert recs[1].abstract == "Second one here. Yes."
    assert recs[0].venue is None


def test_jsonl_records_use_their_fields(tmp_path):
    p = write(tmp_path / "r.jsonl",
              '{"id": "icml-1", "title": "T1", "abstract": "A one.", "venue": "ICML 2025", "code": "https://github.com/a/b"}\n'
              '\n{"abstract": "A two.", "year": "2024"}\n')
    a, b = read_file(p)
    assert (a.doc, a.title, a.venue, a.year, a.code) == ("icml-1", "T1", "ICML 2025", 2025, ("https://github.com/a/b",))
    assert (b.doc, b.year, b.line) == ("r.jsonl#1", 2024, 3)


def test_author_keywords_are_read_and_kept(tmp_path):
    p = write(tmp_path / "k.jsonl",
              '{"id": "a", "abstract": "A one.", "keywords": "geometric consistency;relative pose; RGB-D"}\n'
              '{"id": "b", "abstract": "A two.", "keywords": ["GANs", "GANs", "image synthesis"]}\n'
              '{"id": "c", "abstract": "A three."}\n')
    a, b, c = read_file(p)
    assert a.keywords == ("geometric consistency", "relative pose", "RGB-D")
    assert b.keywords == ("GANs", "image synthesis") and c.keywords == ()
    from kg.io.graphjson import records_from_jsonl, records_to_jsonl

    out = tmp_path / "records.jsonl"
    out.write_text(records_to_jsonl([a, b, c]), encoding="utf-8")
    assert records_from_jsonl(out) == [a, b, c]


def test_keywords_are_evidence_not_text():
    from kg.extract import _text_of, extract_records
    from kg.model import Record

    abstract = "We study relative pose estimation from RGB-D images with RANSAC."
    plain = Record(doc="p", abstract=abstract, source="s", index=0, title="Relative Pose")
    with_kw = Record(doc="k", abstract=abstract, source="s", index=1, title="Relative Pose",
                     keywords=("relative pose estimation", "RANSAC"))
    assert _text_of(plain)[0] != _text_of(with_kw)[0]  # a record's keywords are part of its cache identity
    for ex in extract_records([with_kw]):
        for m in ex.mentions:
            text = with_kw.title if m.source.endswith("@title") else abstract
            assert text[m.start:m.end] == m.text  # keywords never shift or receive a mention


def test_json_array_and_csv(tmp_path):
    j = write(tmp_path / "r.json", '[{"id": "a", "abstract": "x y"}, {"id": "b", "abstract": "z"}]')
    assert [r.doc for r in read_file(j)] == ["a", "b"]
    c = write(tmp_path / "r.csv", 'id,Title,Abstract\np1,"Hello, world","An abstract, with a comma."\n')
    (rec,) = read_file(c)
    assert (rec.doc, rec.title, rec.abstract) == ("p1", "Hello, world", "An abstract, with a comma.")


@pytest.mark.parametrize("name,content,needle", [
    ("bad.jsonl", '{"abstract": "ok"}\n{"abstract": \n', "bad.jsonl:2: bad JSON"),
    ("noabs.jsonl", '{"abstract": "ok"}\n{"title": "no abstract"}\n', "noabs.jsonl:2: record 1 has no abstract"),
    # JSON can spell a lone surrogate, which no UTF-8 output can hold: refused here, not at writing
    ("lone.jsonl", '{"abstract": "ok"}\n{"abstract": "ok", "title": "x \\ud800"}\n',
     "lone.jsonl:2: record 1 holds a lone surrogate (U+D800)"),
    ("nocol.csv", "id,title\n1,x\n", "nocol.csv:1: no 'abstract' column"),
    ("empty.txt", "  \n", "empty.txt: is empty"),
    ("x.pdf", "whatever", "unknown input format"),
])
def test_bad_input_names_file_and_line(tmp_path, name, content, needle):
    p = write(tmp_path / name, content)
    with pytest.raises(InputError) as err:
        read_file(p)
    assert needle in str(err.value)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        read_file(tmp_path / "nope.txt")
    b = tmp_path / "b.txt"
    b.write_bytes(bytes(range(256)) * 8)  # a binary blob, full of NULs
    with pytest.raises(InputError, match="binary"):
        read_file(b)


ABSTRACT = "Café “naïve” résumé — we propose FooNet for image classification."


@pytest.mark.parametrize("encoding,bom,eol", [
    ("utf-8", b"", "\n"), ("utf-8", b"\xef\xbb\xbf", "\r\n"), ("cp1252", b"", "\r\n"), ("latin-1", b"", "\n"),
    ("utf-16", b"", "\n"),
])
def test_encodings_read_to_the_same_text(tmp_path, encoding, bom, eol):
    text = ABSTRACT if encoding != "latin-1" else ABSTRACT.replace("“", '"').replace("”", '"').replace("—", "-")
    p = tmp_path / f"{encoding}.txt"
    p.write_bytes(bom + ("ICML 2025 Papers" + eol + eol + text + eol).encode(encoding))
    warnings = []
    (rec,) = read_records([p], report=warnings.append)
    assert rec.abstract == text and rec.venue == "ICML 2025"
    assert bool(warnings) == (encoding in ("cp1252", "latin-1"))


def test_control_characters_survive(tmp_path):
    p = write(tmp_path / "c.jsonl", json.dumps({"id": "x", "abstract": "A\u0000B\u0007 \u200b\u202e emoji 😀 中文"}) + "\n")
    (rec,) = read_file(p)
    assert rec.abstract == "A\x00B\x07 \u200b\u202e emoji 😀 中文"


def test_skip_invalid_reports_and_skips(tmp_path):
    p = write(tmp_path / "mixed.jsonl", '{"id": "a", "abstract": "ok"}\n{oops\n{"id": "c"}\n{"id": "d", "abstract": "fine"}\n')
    with pytest.raises(InputError, match="mixed.jsonl:2"):
        read_records([p])
    notes = []
    recs = read_records([p], skip_invalid=True, report=notes.append)
    assert [r.doc for r in recs] == ["a", "d"]
    assert any("mixed.jsonl:2" in n for n in notes) and any("mixed.jsonl:3" in n for n in notes)


def test_same_id_different_text_is_reported_and_kept(tmp_path):
    p = write(tmp_path / "dup.jsonl", '{"id": "a", "abstract": "one"}\n{"id": "a", "abstract": "two"}\n'
                                      '{"id": "a", "abstract": "one"}\n')
    notes = []
    recs = read_records([p], report=notes.append)
    assert [r.doc for r in recs] == ["a", "a~2", "a"]
    assert len(notes) == 1 and "dup.jsonl:2" in notes[0] and "dup.jsonl:1" in notes[0]


def test_dict_records(tmp_path):
    (r,) = read_records([{"abstract": "An abstract.", "id": "k"}])
    assert r.doc == "k" and Path(r.source).name == "<records>"


def test_pmlr_page_and_bibtex(tmp_path):
    md = write(tmp_path / "smith25a.md", '---\ntitle: "TinySeg: Segmentation on Phones"\nabstract: >-\n'
               '  We propose TinySeg for semantic segmentation.\n  It runs on phones.\nsoftware: https://github.com/x/tinyseg\n'
               'openreview: abc123\nbooktitle: Proceedings of ICML 2025\n---\n\nBody text.\n')
    (r,) = read_file(md)
    assert (r.doc, r.title, r.abstract) == ("smith25a", "TinySeg: Segmentation on Phones",
                                            "We propose TinySeg for semantic segmentation. It runs on phones.")
    assert r.code == ("https://github.com/x/tinyseg",) and r.year == 2025
    bib = write(tmp_path / "refs.bib", '@comment{x}\n@inproceedings{doe2025,\n  title = {{QuillNet}: Fast Deblurring},\n'
                '  abstract = "We propose QuillNet {for} image deblurring.",\n  year = 2025,\n  booktitle = {ICLR 2025}\n}\n'
                '@article{noabs, title={No abstract here}}\n')
    (b,) = read_file(bib)
    assert (b.doc, b.title, b.abstract, b.venue, b.year, b.line) == (
        "doe2025", "QuillNet: Fast Deblurring", "We propose QuillNet for image deblurring.", "ICLR 2025", 2025, 2)


def test_bibtex_macros_and_latex_are_decoded_and_a_broken_entry_is_named(tmp_path):
    bib = write(tmp_path / "icml.bib", '@string{icml = "ICML 2025"}\n'
                '@inproceedings{a25, title = {The {M}{\\"u}ller Net}, booktitle = icml,\n'
                '  abstract = {We reach 29\\% top-1 with a 3${\\times}$ speed-up on {ImageNet} -- see \\url{https://github.com/a/b}.}}\n'
                '\n@article{broken, title = {unbalanced,\n  abstract = {x}\n\n@misc{c, abstract = "Also {kept}."}\n')
    said = []
    a, c = read_records([bib], skip_invalid=True, report=said.append)
    assert (a.title, a.venue) == ("The Müller Net", "ICML 2025")
    assert a.abstract == "We reach 29% top-1 with a 3× speed-up on ImageNet – see https://github.com/a/b."
    assert c.abstract == "Also kept." and c.line == 8
    assert len(said) == 1 and "icml.bib:5" in said[0] and "@article{broken" in said[0]
    with pytest.raises(InputError, match=r"icml\.bib:5: cannot parse the entry"):
        read_records([bib])


def test_a_pmlr_page_is_read_as_yaml_and_bad_yaml_names_its_line(tmp_path):
    md = write(tmp_path / "p.md", "---\ntitle: 'It''s: a test'\nabstract: |\n  Line one.\n  Line two.\n"
               "author:\n- given: A\n  family: B\npublished: 2023-12-02\n---\nBody\n")
    (r,) = read_file(md)
    assert (r.title, r.abstract) == ("It's: a test", "Line one. Line two.")
    bad = write(tmp_path / "bad.md", "---\ntitle: x\nabstract: [unclosed\n---\n")
    with pytest.raises(InputError, match=r"bad\.md:\d+: bad YAML front matter"):
        read_file(bad)


def test_an_overlong_abstract_is_cut_with_a_warning_naming_the_record(tmp_path):
    from kg.ingest import MAX_ABSTRACT

    path = tmp_path / "big.jsonl"
    long = "word " * (MAX_ABSTRACT // 4)
    path.write_text(json.dumps({"id": "huge", "abstract": long}) + "\n" +
                    json.dumps({"id": "ok", "abstract": "We study image classification."}) + "\n", encoding="utf-8")
    said = []
    big, small = read_records([path], report=said.append)
    assert len(big.abstract) <= MAX_ABSTRACT and long.startswith(big.abstract) and big.abstract.endswith("word")
    assert small.abstract == "We study image classification."
    assert len(said) == 1 and "big.jsonl:1" in said[0] and "'huge'" in said[0]
