import json
import logging

import pandas as pd
import pytest

from boolbench.config import validate_config
from boolbench.corpus.pdf import (
    Box,
    ExtractionSettings,
    Unreadable,
    clean_pages,
    extract_pdf,
    join_lines,
    split_paragraph,
)
from boolbench.corpus.pdf_collection import (
    extract_collection,
    extraction_quality,
    pdf_files,
    token_prf,
)
from boolbench.errors import ConfigError, InputError
from boolbench.paths import artifact
from tests.conftest import tiny_config
from tests.pdf_builder import (
    HEADER,
    HYPHENATED,
    TABLE,
    corrupt_pdf,
    image_only_pdf,
    two_column_paper,
)

SETTINGS = ExtractionSettings()


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    return two_column_paper(tmp_path_factory.mktemp("pdf") / "paper.pdf", seed=3)


# --- one file --------------------------------------------------------------------------------


def test_two_column_paper_gives_its_paragraphs_in_reading_order(paper):
    text = extract_pdf(paper.path, SETTINGS)
    # Every source paragraph comes back whole and in order: columns read left then right,
    # paragraphs broken across a column or page joined, the hyphenated word rejoined.
    assert [t for t, _ in text.passages] == paper.paragraphs
    assert text.pages == 2
    assert [page for _, page in text.passages][0] == 1
    assert [page for _, page in text.passages][-1] == 2
    assert any(HYPHENATED in t for t, _ in text.passages)
    assert not any(f"{HYPHENATED[:5]}-" in t for t, _ in text.passages)


def test_headers_page_numbers_tables_and_headings_are_left_out(paper):
    text = extract_pdf(paper.path, SETTINGS)
    everything = " ".join(t for t, _ in text.passages)
    assert HEADER not in everything
    assert not any(cell in everything.split() for row in TABLE for cell in row)
    assert text.dropped == {
        "running_headers_footers": 2,  # the header of each page
        "page_numbers": 2,
        "table_cells": 12,  # 3 rows x 4 cells
        "headings": 1,  # the title line
    }
    assert text.title == "A Synthetic Study of River Trade"  # from the metadata


def test_title_falls_back_to_the_first_heading_then_the_file_name(tmp_path):
    heading = two_column_paper(
        tmp_path / "h.pdf", title="Harbors of the North", metadata_title=False
    )
    assert extract_pdf(heading.path, SETTINGS).title == "Harbors of the North"
    bare = two_column_paper(tmp_path / "plain-report.pdf", title=None)
    assert extract_pdf(bare.path, SETTINGS).title == "plain-report"


def test_long_paragraphs_split_at_sentence_ends(paper):
    text = extract_pdf(paper.path, ExtractionSettings(max_words=40))
    assert all(len(t.split()) <= 40 for t, _ in text.passages)
    assert len(text.passages) > len(paper.paragraphs)
    # Nothing lost or reordered, and every part ends a sentence.
    assert " ".join(t for t, _ in text.passages) == " ".join(paper.paragraphs)
    assert all(t.endswith(".") for t, _ in text.passages)


def test_split_paragraph():
    text = "One two three. Four five six seven. Eight nine. Ten eleven twelve thirteen."
    assert split_paragraph(text, 20) == [text]
    assert split_paragraph(text, 7) == [
        "One two three. Four five six seven.",
        "Eight nine. Ten eleven twelve thirteen.",
    ]
    # A sentence longer than the limit is cut at words.
    long = " ".join(f"w{i}" for i in range(25)) + "."
    parts = split_paragraph(long, 10)
    assert [len(p.split()) for p in parts] == [10, 10, 5]
    assert " ".join(parts) == long


def box(page, x0, y1, lines, size=10.0):
    """A text box of `lines` stacked downwards from y1, 12 points apart, 6 points per char."""
    spans = [(x0, y1 - 12 * (i + 1), x0 + 6 * len(t), y1 - 12 * i) for i, t in enumerate(lines)]
    return Box(page, x0, y1 - 12 * len(lines), max(s[2] for s in spans), y1, lines, spans,
               size, sum(map(len, lines)))  # fmt: skip


def test_a_compact_table_with_cells_merged_into_lines_is_left_out():
    # How pdfminer reads a small Chromium table: neighbouring cells merge into one line, and
    # two lines of the box sit side by side ("0.8 0.7" right of "Recall").
    table = box(1, 40, 700, ["Metric A B", "0.8 0.7", "Recall", "Precision 0.6 0.9"])
    table.line_spans[1] = (90, 676, 120, 688)
    table.line_spans[2] = (40, 676, 75, 688)
    text = " ".join(["word"] * 30)
    paragraph = box(1, 40, 600, [text[:60], text[60:]])
    cleaned = clean_pages([[table, paragraph]], SETTINGS)
    assert cleaned.dropped["table_cells"] == 1
    assert [t for t, _ in cleaned.passages] == [text]


def test_a_paragraph_goes_on_at_the_next_column_top_even_in_upper_case():
    left = box(1, 40, 700, ["The survey covered the coast of", "the northern provinces and"])
    right = box(1, 320, 700, ["Norway in the spring of that year."])
    new = box(1, 320, 650, ["A second survey followed.", "It was shorter."])
    cleaned = clean_pages([[right, new, left]], SETTINGS)
    assert [t for t, _ in cleaned.passages] == [
        "The survey covered the coast of the northern provinces and Norway in the spring of "
        "that year.",
        "A second survey followed. It was shorter.",
    ]


def test_join_lines_rejoins_hyphenation_and_ligatures():
    assert join_lines(["an extra-\n", "ordinary ﬁnd\n"]) == "an extraordinary find"
    assert join_lines(["the well-\n", "Known case"]) == "the well- Known case"  # not a split word
    assert join_lines(["(cid:12)a  b", "", "c"]) == "a b c"
    assert join_lines(["2.1 Methods . . . . . . . 15"]) == "2.1 Methods 15"  # dot leaders


@pytest.mark.parametrize(
    "make, reason",
    [
        (lambda p, src: two_column_paper(p, password="secret").path, "encrypted"),
        (lambda p, src: corrupt_pdf(p, src), "corrupt"),
        (lambda p, src: p.write_bytes(b"") and p, "empty"),
        (lambda p, src: image_only_pdf(p), "image-only"),
    ],
)
def test_unreadable_files_say_why(tmp_path, paper, make, reason):
    path = tmp_path / "bad.pdf"
    make(path, paper.path)
    with pytest.raises(Unreadable) as raised:
        extract_pdf(path, SETTINGS)
    assert raised.value.reason == reason


# --- a collection ----------------------------------------------------------------------------


def build_collection(root):
    (root / "sub").mkdir(parents=True)
    good = [
        two_column_paper(root / "a.pdf", seed=1),
        two_column_paper(root / "sub" / "b.pdf", seed=2, title=None),
    ]
    two_column_paper(root / "locked.pdf", password="secret")
    corrupt_pdf(root / "broken.pdf", good[0].path)
    (root / "empty.pdf").write_bytes(b"")
    image_only_pdf(root / "sub" / "scan.PDF")
    (root / "notes.txt").write_text("not a pdf")
    return good


def run_collection(root, out, **kwargs):
    kwargs = {"workers": 2, "timeout_s": 60, **kwargs}
    report = extract_collection(
        pdf_files(str(root)),
        kwargs.pop("settings", SETTINGS),
        passages_out=out / "passages.parquet",
        report_out=out / "report.json",
        **kwargs,
    )
    return report, pd.read_parquet(out / "passages.parquet")


def test_collection_skips_bad_files_with_one_line_each(tmp_path, caplog):
    good = build_collection(tmp_path / "pdfs")
    with caplog.at_level(logging.WARNING, logger="boolbench.corpus.pdf_collection"):
        report, passages = run_collection(tmp_path / "pdfs", tmp_path / "out")
    assert report["files"] == 6  # notes.txt is not a PDF
    assert report["extracted"] == 2
    assert report["skipped_by_reason"] == {
        "corrupt": 1,
        "empty": 1,
        "encrypted": 1,
        "image-only": 1,
    }
    assert {s["file"]: s["reason"] for s in report["skipped"]} == {
        "broken.pdf": "corrupt",
        "empty.pdf": "empty",
        "locked.pdf": "encrypted",
        "sub/scan.PDF": "image-only",
    }
    skip_lines = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skip_lines) == 4
    assert any("locked.pdf (encrypted)" in line for line in skip_lines)
    assert report["pages"] == 2 + 2 + 1  # the two papers and the scan
    assert report["passages"] == len(passages) == sum(len(g.paragraphs) for g in good)
    assert report["dropped"]["table_cells"] == 24
    assert json.loads((tmp_path / "out" / "report.json").read_text()) == report

    assert passages["doc_id"].unique().tolist() == ["a.pdf", "sub/b.pdf"]
    assert passages["pid"].is_unique
    assert passages["pid"].iloc[0] == "a.pdf#0"
    for doc_id, built in zip(["a.pdf", "sub/b.pdf"], good, strict=True):
        rows = passages[passages["doc_id"] == doc_id]
        assert rows["position"].tolist() == list(range(len(built.paragraphs)))
        assert rows["text"].tolist() == built.paragraphs
    assert passages.loc[passages["doc_id"] == "sub/b.pdf", "title"].unique().tolist() == ["b"]


def test_no_passage_at_all_fails_naming_the_reasons(tmp_path, paper):
    root = tmp_path / "pdfs"
    root.mkdir()
    corrupt_pdf(root / "x.pdf", paper.path)
    image_only_pdf(root / "y.pdf")
    with pytest.raises(
        InputError, match=r"no passage from 2 PDF file\(s\) \(1 corrupt, 1 image-only\)"
    ):
        run_collection(root, tmp_path / "out")
    # The report is written all the same, to show what happened.
    assert json.loads((tmp_path / "out" / "report.json").read_text())["extracted"] == 0


def test_a_file_past_the_timeout_is_skipped_and_the_rest_kept(tmp_path, paper):
    root = tmp_path / "pdfs"
    root.mkdir()
    two_column_paper(root / "long.pdf", pages_of_text=150, seed=5)  # ~100 pages: ~6 s to read
    (root / "short.pdf").write_bytes(paper.path.read_bytes())
    report, passages = run_collection(root, tmp_path / "out", timeout_s=2, workers=1)
    assert report["skipped"] == [
        {"file": "long.pdf", "reason": "timeout", "detail": "extraction took over 2 s"}
    ]
    assert passages["doc_id"].unique().tolist() == ["short.pdf"]


def test_cached_files_are_not_read_again(tmp_path, paper):
    root, cache = tmp_path / "pdfs", tmp_path / "cache"
    root.mkdir()
    (root / "one.pdf").write_bytes(paper.path.read_bytes())
    first, _ = run_collection(root, tmp_path / "o1", cache_dir=cache)
    assert first["extracted_now"] == 1
    two_column_paper(root / "two.pdf", seed=9)
    second, passages = run_collection(root, tmp_path / "o2", cache_dir=cache)
    assert second["extracted_now"] == 1  # only the new file
    assert passages["doc_id"].unique().tolist() == ["one.pdf", "two.pdf"]
    # Other settings, other results: nothing reused.
    third, _ = run_collection(
        root, tmp_path / "o3", cache_dir=cache, settings=ExtractionSettings(max_words=40)
    )
    assert third["extracted_now"] == 2


def test_pdf_files_from_a_list_and_bad_paths(tmp_path, paper):
    for relative in ("a/one.pdf", "b/sub/two.pdf"):
        (tmp_path / relative).parent.mkdir(parents=True)
        (tmp_path / relative).write_bytes(paper.path.read_bytes())
    # doc ids are relative to the files' common folder, wherever the collection is mounted
    files = pdf_files([str(tmp_path / "b/sub/two.pdf"), str(tmp_path / "a/one.pdf")])
    assert list(files) == ["b/sub/two.pdf", "a/one.pdf"]
    assert files["a/one.pdf"] == (tmp_path / "a/one.pdf").resolve()
    with pytest.raises(ConfigError, match="not found: .*missing.pdf"):
        pdf_files([str(tmp_path / "missing.pdf")])
    (tmp_path / "none").mkdir()
    with pytest.raises(ConfigError, match="no .pdf files under"):
        pdf_files(str(tmp_path / "none"))


# --- extraction quality (the DRC paper's token precision / recall / F1) ----------------------


def test_token_prf_by_hand():
    # extracted: a a b c (4 tokens), reference: a b b d e (5); overlap a, b = 2
    precision, recall, f1 = token_prf("A a b, c", "a b b d e")
    assert (precision, recall) == (0.5, 0.4)
    assert f1 == pytest.approx(2 * 0.5 * 0.4 / 0.9)
    assert token_prf("", "a") == (0.0, 0.0, 0.0)


def test_extraction_quality_against_the_source_text(tmp_path, paper):
    passages = pd.DataFrame(
        {
            "doc_id": ["paper.pdf", "paper.pdf"],
            "position": [1, 0],
            "text": [" ".join(paper.paragraphs[1:]), paper.paragraphs[0]],
        }
    )
    reference = tmp_path / "ref"
    reference.mkdir()
    (reference / "paper.txt").write_text(paper.reference + f"\n{HEADER}\n")  # 4 extra tokens
    summary = extraction_quality(
        passages, ["paper.pdf", "other.pdf"], reference, tmp_path / "q.parquet", tmp_path / "q.json"
    )
    scores = pd.read_parquet(tmp_path / "q.parquet")
    n = scores["extracted_tokens"].iloc[0]
    assert scores["reference_tokens"].iloc[0] == n + 4
    assert scores["precision"].iloc[0] == 1.0
    assert scores["recall"].iloc[0] == pytest.approx(n / (n + 4))
    assert summary["without_reference"] == ["other.pdf"]
    assert summary["files"] == 1


# --- config ---------------------------------------------------------------------------------


def test_pdf_config_defaults_and_checks():
    config = validate_config(
        {"corpora": {"docs": {"source": "pdf", "path": ["a.pdf"], "extraction": {"max_words": 80}}}}
    )
    assert config["corpora"]["docs"]["extraction"] == {
        "max_words": 80,
        "min_words": 5,
        "repeat_fraction": 0.5,
        "timeout_s": 120,
        "cache_dir": "cache",
    }
    with pytest.raises(ConfigError, match=r"corpora.c.path: a list of files needs source 'pdf'"):
        validate_config({"corpora": {"c": {"source": "jsonl", "path": ["a.jsonl"]}}})
    with pytest.raises(ConfigError, match=r"corpora.c.reference: only a pdf corpus"):
        validate_config({"corpora": {"c": {"source": "jsonl", "path": "a", "reference": "r"}}})
    with pytest.raises(ConfigError, match=r"extraction.timeout_s"):
        validate_config(
            {"corpora": {"c": {"source": "pdf", "path": "d"}}, "extraction": {"timeout_s": 0}}
        )


# --- the workflow ----------------------------------------------------------------------------


def test_pdf_corpora_in_both_grouping_modes(workflow):
    root = workflow.path("pdfs")
    root.mkdir()
    papers = [two_column_paper(root / f"p{i}.pdf", seed=i) for i in range(3)]
    image_only_pdf(root / "scan.pdf")
    reference = workflow.path("reference")
    reference.mkdir()
    for i, paper in enumerate(papers):
        (reference / f"p{i}.txt").write_text(paper.reference)
    config = tiny_config(
        corpora={
            "bydoc": {
                "source": "pdf",
                "path": "pdfs",
                "grouping": "document",
                "reference": "reference",
            },
            "byclus": {"source": "pdf", "path": "pdfs", "encoder": {"shards": 1}},
        },
        clustering={"sample_size": 40, "svd_components": 8, "n_clusters": 6},
        candidates={"n_groups": 4},
    )
    workflow.write_config(config)
    targets = [artifact("candidates", corpus="bydoc"), artifact("candidates", corpus="byclus"),
               artifact("extraction_quality_summary", corpus="bydoc")]  # fmt: skip
    assert workflow.planned_jobs(*targets) == {
        "extract_pdf": 2,
        "extraction_quality": 1,
        "ingest": 2,
        "group_by_document": 1,
        "encode_shard": 1,
        "gather_embeddings": 1,
        "reduce": 1,
        "cluster": 1,
        "sample_candidates": 2,
    }
    workflow.run(*targets)

    corpus = pd.read_parquet(workflow.path(artifact("corpus", corpus="bydoc")))
    assert len(corpus) == sum(len(p.paragraphs) for p in papers)
    assert corpus["doc_id"].unique().tolist() == ["p0.pdf", "p1.pdf", "p2.pdf"]
    report = json.loads(workflow.path(artifact("pdf_report", corpus="bydoc")).read_text())
    assert report["skipped_by_reason"] == {"image-only": 1}
    other = json.loads(workflow.path(artifact("pdf_report", corpus="byclus")).read_text())
    assert other["passages"] == report["passages"]
    quality = json.loads(
        workflow.path(artifact("extraction_quality_summary", corpus="bydoc")).read_text()
    )
    assert quality["f1"] == 1.0 and quality["files"] == 3

    doc_of = dict(zip(corpus["pid"], corpus["doc_id"], strict=True))
    by_document = pd.read_parquet(workflow.path(artifact("candidates", corpus="bydoc")))
    assert (by_document.groupby("group")["pid"].agg(lambda p: p.map(doc_of).nunique()) == 1).all()
    clustered = pd.read_parquet(workflow.path(artifact("candidates", corpus="byclus")))
    assert clustered["pid"].isin(set(corpus["pid"])).all()

    # A new PDF reruns the extraction (reading only that file) and what depends on it.
    two_column_paper(root / "p3.pdf", seed=3)
    assert workflow.planned_jobs(artifact("candidates", corpus="bydoc")) == {
        "extract_pdf": 1,
        "ingest": 1,
        "group_by_document": 1,
        "sample_candidates": 1,
    }
    workflow.run(artifact("candidates", corpus="bydoc"))
    report = json.loads(workflow.path(artifact("pdf_report", corpus="bydoc")).read_text())
    assert (report["files"], report["extracted_now"]) == (5, 1)


def test_a_missing_pdf_folder_is_named_before_anything_runs(workflow):
    workflow.write_config(tiny_config(corpora={"docs": {"source": "pdf", "path": "nowhere"}}))
    result = workflow.run("--dry-run", check=False)
    assert result.returncode != 0
    assert "corpora.docs.path: nowhere not found" in result.stdout + result.stderr


def test_page_number_pattern():
    from boolbench.corpus.pdf import PAGE_NUMBER

    numbers = ["7", "Page 3", "page 3 of 9", "4/10", "xiv", "IV"]
    assert all(PAGE_NUMBER.match(n) for n in numbers)
    assert not any(PAGE_NUMBER.match(w) for w in ["mix", "did", "civil", "", "3.5", "Page"])
