"""Question files: the released BoolQuestions layout (as `datasets` and the hub write it),
another run's dataset, a boolbench BEIR export; their errors; our released-layout export."""

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from boolbench.corpus.question_sets import (
    export_released,
    import_questions,
    question_facts,
    question_table,
    read_questions,
)
from boolbench.corpus.sources import IngestReport, SourceSpec, ingest, iter_passages
from boolbench.errors import InputError
from boolbench.generation.dataset import DATASET_SCHEMA, export_beir
from tests.released_layout import (
    released_corpus,
    released_questions,
    wikipedia_articles,
    write_with_datasets,
)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A released-layout corpus (JSON lines) and 12 questions, the corpus ingested."""
    folder = tmp_path_factory.mktemp("released")
    articles = wikipedia_articles(40)
    write_with_datasets(released_corpus(articles), folder / "corpus.jsonl")
    records = released_questions(articles, 12, seed=3)
    spec = SourceSpec(source="boolquestions", path=str(folder / "corpus.jsonl"))
    corpus = folder / "corpus.parquet"
    ingest(spec, corpus, folder / "q.parquet", folder / "r.parquet")
    return folder, records, corpus


def expected(records):
    """qid -> (type, positives, negatives), read the way the official evaluation reads them."""
    return {
        r["qid"]: (
            r["question_type"].upper(),
            [c["passage_id"] for c in r["positive_ctxs"]],
            [c["passage_id"] for c in r["negative_ctxs"]],
        )
        for r in records
    }


def labels(frame):
    return {
        row.qid: (row.type, list(row.positives), list(row.negatives))
        for row in frame.itertuples(index=False)
    }


def test_released_corpus_source_reads_docid_doc_title(released):
    folder, _, corpus = released
    table = pd.read_parquet(corpus)
    articles = wikipedia_articles(40)
    assert table["pid"].tolist() == articles["pid"].tolist()
    assert table["title"].tolist() == articles["title"].tolist()
    # MS MARCO's corpus has no title; a Parquet corpus as the hub converts it.
    marco = folder / "marco.parquet"
    pq.write_table(pa.table({"docid": [7, 8], "doc": ["seven", "eight"]}), marco)
    spec = SourceSpec(source="boolquestions", path=str(marco))
    frame = pd.concat(list(iter_passages(spec, IngestReport())))
    assert frame["pid"].tolist() == ["7", "8"] and frame["title"].isna().all()


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".json"])
def test_released_layout_as_datasets_writes_it(released, suffix):
    folder, records, corpus = released
    path = folder / f"eval{suffix}"
    if suffix == ".json":  # one JSON array (datasets' to_json(lines=False), or by hand)
        path.write_text(json.dumps(records))
    else:
        write_with_datasets(records, path)
    questions = import_questions(path, corpus)
    assert labels(questions) == expected(records)
    assert questions["question"].tolist() == [r["question"] for r in records]
    assert set(questions["split"]) == {"test"} and set(questions["source"]) == {"imported"}
    assert questions["group"].tolist() == list(range(len(records)))
    assert question_facts(path).layout == "released"
    assert not question_facts(path).has_train and not question_facts(path).has_expressions


def test_integer_ids_and_a_split_column_are_kept(released):
    folder, records, corpus = released
    numbered = {pid: i for i, pid in enumerate(pd.read_parquet(corpus)["pid"])}
    corpus_frame = pd.read_parquet(corpus).assign(pid=lambda f: f["pid"].map(numbered))
    ints = folder / "int_corpus.parquet"
    corpus_frame.rename(columns={"pid": "docid", "text": "doc"}).to_parquet(ints)
    int_corpus = folder / "int_corpus_ingested.parquet"
    ingest(
        SourceSpec(source="boolquestions", path=str(ints)),
        int_corpus,
        folder / "q2.parquet",
        folder / "r2.parquet",
    )
    rows = [
        {
            **r,
            "qid": i,
            "split": "train" if i % 2 else "test",
            "positive_ctxs": [
                {"passage_id": numbered[c["passage_id"]]} for c in r["positive_ctxs"]
            ],
            "negative_ctxs": [
                {"passage_id": numbered[c["passage_id"]]} for c in r["negative_ctxs"]
            ],
        }
        for i, r in enumerate(records)
    ]
    path = write_with_datasets(rows, folder / "int_eval.parquet")
    questions = import_questions(path, int_corpus)
    assert questions["qid"].tolist() == [str(i) for i in range(len(rows))]
    assert questions["split"].tolist() == [r["split"] for r in rows]
    assert questions["positives"].map(list).tolist() == [
        [str(c["passage_id"]) for c in r["positive_ctxs"]] for r in rows
    ]
    assert question_facts(path).has_train


def test_another_runs_dataset_and_its_beir_export(released, tmp_path):
    _, records, corpus = released
    frame = pd.DataFrame(
        {
            "qid": [r["qid"] for r in records],
            "type": [r["question_type"].upper() for r in records],
            "question": [r["question"] for r in records],
            "source": "llm",
            "operator": [r["question_type"].upper() for r in records],
            "operand_qids": [["s1", "s2"]] * len(records),
            # the first: an operand that was never written (kept as None, not "None")
            "operand_texts": [[None, "What is b?"]]
            + [["What is a?", "What is b?"]] * (len(records) - 1),
            "positives": [[c["passage_id"] for c in r["positive_ctxs"]] for r in records],
            "negatives": [[c["passage_id"] for c in r["negative_ctxs"]] for r in records],
            "pooled_positives": [[]] * len(records),  # tests/test_labels.py: pooled labels
            "pooled_negatives": [[]] * len(records),
            "group": [10 + i for i in range(len(records))],
            "cluster": 4,
            "split": ["train", "test"] * (len(records) // 2),
            "prompt_hash": "abc",
            "model": "m",
        }
    )
    dataset = tmp_path / "boolquestions.parquet"
    pq.write_table(
        pa.Table.from_pandas(frame, schema=DATASET_SCHEMA, preserve_index=False), dataset
    )
    imported = import_questions(dataset, corpus)
    assert labels(imported) == expected(records)
    assert imported["split"].tolist() == frame["split"].tolist()
    assert imported["operand_texts"].map(list).tolist() == frame["operand_texts"].tolist()
    assert imported["group"].tolist() == frame["group"].tolist()
    facts = question_facts(dataset)
    assert (facts.layout, facts.has_train, facts.has_expressions) == ("boolbench", True, True)

    beir = tmp_path / "beir"
    out = {
        "corpus": beir / "corpus.jsonl",
        "queries": beir / "queries.jsonl",
        **{name: beir / "qrels" / f"{name}.tsv" for name in ("test", "train")},
        **{
            f"{n}{suffix}": beir / "qrels" / f"{n}{suffix}.tsv"
            for n in ("test", "train")
            for suffix in ("_group", "_negatives")
        },
    }
    export_beir(frame, corpus, out)
    from_beir = import_questions(beir, corpus)
    assert labels(from_beir) == expected(records)
    assert from_beir["split"].tolist() == frame["split"].tolist()
    facts = question_facts(beir)
    assert (facts.layout, facts.has_train, facts.has_expressions) == ("beir", True, False)


def test_our_export_reads_back_in_the_released_layout(released, tmp_path):
    """Code written for the released files reads ours: the official evaluation's reading of
    `eval` (positive and negative passage ids per question type) on the file loaded with
    `datasets`, and our own released-layout reader, give the same questions and labels."""
    from datasets import load_dataset

    folder, records, corpus = released
    original = import_questions(write_with_datasets(records, folder / "e.jsonl"), corpus)
    original["split"] = ["train" if i % 3 == 0 else "test" for i in range(len(original))]
    dataset = tmp_path / "boolquestions.parquet"
    pq.write_table(
        pa.Table.from_pandas(original, schema=DATASET_SCHEMA, preserve_index=False), dataset
    )
    out = {
        "eval": tmp_path / "released" / "eval.jsonl",
        "corpus": tmp_path / "released" / "c.jsonl",
        "card": tmp_path / "released" / "README.md",
    }
    card = {
        "corpus": "bq",
        "entry": {"source": "boolquestions", "passage_template": "{title} [SEP] {text}"},
        "config": {"evaluation": {"depth": 100, "table_split": "all"}},
    }
    export_released(dataset, corpus, out, card)
    assert "every retriever reading a passage as `{title} [SEP] {text}`" in out["card"].read_text()

    back = import_questions(out["eval"], corpus)
    assert labels(back) == labels(original)
    assert back["question"].tolist() == original["question"].tolist()
    assert back["split"].tolist() == original["split"].tolist()

    evalset = load_dataset("json", data_files=str(out["eval"]), split="train")
    for kind in ("and", "or", "not"):
        rows = [d for d in evalset if d["question_type"] == kind]
        positives = {d["qid"]: [c["passage_id"] for c in d["positive_ctxs"]] for d in rows}
        want = original[original["type"] == kind.upper()]
        assert positives == dict(zip(want["qid"], want["positives"].map(list), strict=True))
    corpus_rows = load_dataset("json", data_files=str(out["corpus"]), split="train")
    assert corpus_rows.column_names == ["docid", "doc", "title"]
    docs = {d["docid"]: f"{d['title']} [SEP] {d['doc']}" for d in corpus_rows}
    table = pd.read_parquet(corpus)
    assert docs == {
        p: f"{t} [SEP] {x}" for p, t, x in zip(table.pid, table.title, table.text, strict=True)
    }


def test_table1_of_imported_questions(released):
    _, records, corpus = released
    folder = released[0]
    questions = import_questions(write_with_datasets(records, folder / "t.jsonl"), corpus)
    table = question_table(questions).set_index("type")
    assert table.loc["ALL", "questions"] == 12 and table.loc["AND", "questions"] == 4
    assert table.loc["OR", "avg_pos"] == 2.0 and table.loc["AND", "avg_pos"] == 1.0
    negatives = sum(len(r["negative_ctxs"]) for r in records)
    assert table.loc["ALL", "avg_neg"] == pytest.approx(negatives / 12)
    assert table.loc["ALL", "test"] == 12 and table.loc["ALL", "train"] == 0


def jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD = {
    "qid": "q1",
    "question": "What is a or b?",
    "question_type": "or",
    "positive_ctxs": [{"passage_id": "P1"}],
    "negative_ctxs": [],
}


@pytest.mark.parametrize(
    "change, message",
    [
        ({"question_type": None}, "line 2: question q1: unknown question type None"),
        (
            {"question_type": "xor"},
            "line 2: question q1: unknown question type 'xor' (expected and, or, not)",
        ),  # noqa: E501
        ({"positive_ctxs": []}, "line 2: question q1: no positive passage"),
        (
            {"positive_ctxs": [{"id": "P1"}]},
            "line 2: positive_ctxs holds {'id': 'P1'}, not an object with a passage_id",
        ),  # noqa: E501
        (
            {"negative_ctxs": "P2"},
            "line 2: negative_ctxs is not a list of objects with a passage_id",
        ),
        ({"question": " "}, "line 2: question q1: empty question text"),
        ({"split": "dev"}, "line 2: question q1: split 'dev' is not train or test"),
        ({"qid": "q0"}, "line 2: duplicate qid 'q0' (first at line 1)"),
    ],
)
def test_bad_rows_are_one_line_naming_file_row_and_problem(released, tmp_path, change, message):
    _, _, corpus = released
    first = {**GOOD, "qid": "q0", "positive_ctxs": [{"passage_id": "Erbium"}]}
    bad = {**GOOD, "positive_ctxs": [{"passage_id": "Erbium"}], **change}
    path = jsonl(tmp_path / "eval.jsonl", [first, bad])
    with pytest.raises(InputError) as error:
        import_questions(path, corpus)
    assert str(error.value).startswith(f"{path}, {message}")
    assert "\n" not in str(error.value)


def test_missing_fields_and_bad_json_name_the_line(released, tmp_path):
    _, _, corpus = released
    path = jsonl(tmp_path / "eval.jsonl", [{k: v for k, v in GOOD.items() if k != "negative_ctxs"}])
    with pytest.raises(InputError, match=r"eval.jsonl, line 1: missing field\(s\) 'negative_ctxs'"):
        import_questions(path, corpus)
    path.write_text(json.dumps(GOOD) + "\n{not json\n")
    with pytest.raises(InputError, match=r"eval.jsonl, line 2: invalid JSON"):
        import_questions(path, corpus)
    table = tmp_path / "eval.parquet"
    pq.write_table(pa.table({"qid": ["a"], "question": ["x?"]}), table)
    with pytest.raises(
        InputError, match=r"eval.parquet, row 1: missing field\(s\) 'question_type'"
    ):
        import_questions(table, corpus)


def test_passages_missing_from_the_corpus_are_counted_with_the_first_ids(released, tmp_path):
    _, _, corpus = released
    rows = [
        {**GOOD, "qid": "q0", "positive_ctxs": [{"passage_id": "Erbium"}]},
        {**GOOD, "qid": "q1", "positive_ctxs": [{"passage_id": f"gone{i}"} for i in range(7)]},
    ]
    path = jsonl(tmp_path / "eval.jsonl", rows)
    with pytest.raises(InputError) as error:
        import_questions(path, corpus)
    assert str(error.value).startswith(
        f"{path}: 7 labelled passage id(s) are not in the corpus ('gone0', 'gone1', 'gone2', "
        "'gone3', 'gone4', ...; the first in question q1, line 2)"
    )


def test_read_questions_keeps_file_order(released):
    folder, records, _ = released
    frame = read_questions(write_with_datasets(records[::-1], folder / "reversed.jsonl"))
    assert frame["qid"].tolist() == [r["qid"] for r in records[::-1]]
