import json

import pandas as pd
import pyarrow.parquet as pq
import pytest

from boolbench.corpus.sources import SourceSpec, ingest
from boolbench.errors import InputError


def run_ingest(tmp_path, **spec):
    out = tmp_path / "out"
    report = ingest(
        SourceSpec(**spec),
        out / "corpus.parquet",
        out / "queries.parquet",
        out / "qrels.parquet",
    )
    corpus = pd.read_parquet(out / "corpus.parquet")
    queries = pd.read_parquet(out / "queries.parquet")
    qrels = pd.read_parquet(out / "qrels.parquet")
    return corpus, queries, qrels, report


def write(path, content):
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


# --- readers ---------------------------------------------------------------------------------


def test_msmarco_collection_with_queries_and_trec_qrels(tmp_path):
    collection = write(
        tmp_path / "collection.tsv",
        '0\tThe "Manhattan Project" built the first bomb.\n1\tParis is in France.\n'
        "2\tAn unjudged passage.\n",
    )
    queries = write(tmp_path / "queries.tsv", "10\twho built the bomb\n11\twhere is paris\n")
    qrels = write(tmp_path / "qrels.dev.tsv", "10\t0\t0\t1\n11\t0\t1\t1\n")
    corpus, q, r, report = run_ingest(
        tmp_path,
        source="msmarco",
        path=str(collection),
        queries=str(queries),
        qrels=str(qrels),
    )
    assert corpus["pid"].tolist() == ["0", "1", "2"]
    # QUOTE_NONE: a quote inside a passage stays part of the text.
    assert corpus["text"][0] == 'The "Manhattan Project" built the first bomb.'
    assert corpus["title"].isna().all() and corpus["doc_id"].isna().all()
    assert corpus["position"].tolist() == [0, 0, 0]
    assert q.to_dict("records") == [
        {"qid": "10", "text": "who built the bomb"},
        {"qid": "11", "text": "where is paris"},
    ]
    assert r[["qid", "pid"]].values.tolist() == [["10", "0"], ["11", "1"]]
    assert report.passages == 3
    schema = pq.read_schema(tmp_path / "out" / "corpus.parquet")
    assert [str(t) for t in schema.types] == ["string", "string", "string", "string", "int64"]


def test_dpr_passages_share_a_doc_in_order(tmp_path):
    path = write(
        tmp_path / "psgs_w100.tsv",
        'id\ttext\ttitle\n1\t"Aaron is a prophet, ""brother"" of Moses."\tAaron\n'
        "2\tHe was born in Egypt.\tAaron\n3\tAbba is a band.\tABBA\n4\tThey won in 1974.\tABBA\n"
        "5\tThey split.\tABBA\n",
    )
    corpus, _, _, _ = run_ingest(tmp_path, source="dpr", path=str(path))
    assert corpus["text"][0] == 'Aaron is a prophet, "brother" of Moses.'
    assert corpus["doc_id"].tolist() == ["Aaron", "Aaron", "ABBA", "ABBA", "ABBA"]
    assert corpus["position"].tolist() == [0, 1, 0, 1, 2]


def test_beir_folder_with_queries_and_qrels(tmp_path):
    folder = tmp_path / "scifact"
    write(
        folder / "corpus.jsonl",
        '{"_id": "d1", "title": "T1", "text": "first"}\n\n'
        '{"_id": 2, "title": "", "text": "second"}\n',
    )
    write(folder / "queries.jsonl", '{"_id": "q1", "text": "which first"}\n')
    write(folder / "qrels" / "test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\t2\t0\n")
    corpus, queries, qrels, _ = run_ingest(tmp_path, source="beir", path=str(folder))
    assert corpus["pid"].tolist() == ["d1", "2"]  # ids become strings
    assert corpus["title"].tolist() == ["T1", ""]
    assert queries["qid"].tolist() == ["q1"]
    assert qrels.values.tolist() == [["q1", "d1", 1]]  # zero-relevance judgments dropped


@pytest.mark.parametrize("kind", ["parquet", "jsonl", "csv"])
def test_generic_formats_with_column_mapping(tmp_path, kind):
    frame = pd.DataFrame(
        {
            "id": [7, 8, 9],
            "body": ["alpha text", "beta text", "gamma text"],
            "page": ["p1", "p1", "p2"],
            "idx": [1, 0, 0],
        }
    )
    path = tmp_path / f"corpus.{kind}"
    if kind == "parquet":
        frame.to_parquet(path)
    elif kind == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_csv(path, index=False)
    columns = {"pid": "id", "text": "body", "doc_id": "page", "position": "idx"}
    corpus, _, _, _ = run_ingest(tmp_path, source=kind, path=str(path), columns=columns)
    assert corpus["pid"].tolist() == ["7", "8", "9"]
    assert corpus["text"].tolist() == ["alpha text", "beta text", "gamma text"]
    assert corpus["doc_id"].tolist() == ["p1", "p1", "p2"]
    assert corpus["position"].tolist() == [1, 0, 0]


def test_tsv_with_header_through_csv_source(tmp_path):
    path = write(tmp_path / "c.tsv", "pid\ttext\na\tone, two\nb\tthree\n")
    corpus, _, _, _ = run_ingest(tmp_path, source="csv", path=str(path), delimiter="\t")
    assert corpus["text"].tolist() == ["one, two", "three"]


def test_vital_articles_limit_is_stable_and_makes_queries(tmp_path):
    small, queries, qrels, _ = run_ingest(tmp_path / "a", source="vital_articles", limit=30)
    large, _, _, _ = run_ingest(tmp_path / "b", source="vital_articles", limit=90)
    assert len(small) == 30 and len(large) == 90
    assert large["pid"].tolist()[:30] == small["pid"].tolist()
    assert (small["doc_id"] == small["pid"]).all()
    # One query per article that has a description; its relevant passage is the article.
    assert 0 < len(queries) <= 30
    assert (qrels["qid"] == qrels["pid"]).all() and set(qrels["pid"]) <= set(small["pid"])
    assert small["pid"].str.contains(" ").sum() == 0
    assert small["title"].notna().all()


def test_qrels_outside_a_limited_corpus_are_dropped(tmp_path):
    collection = write(tmp_path / "collection.tsv", "0\ta\n1\tb\n2\tc\n")
    queries = write(tmp_path / "q.tsv", "q0\tfind a\nq2\tfind c\n")
    qrels = write(tmp_path / "qrels.txt", "q0 0 0 1\nq2 0 2 1\n")
    _, q, r, report = run_ingest(
        tmp_path,
        source="msmarco",
        path=str(collection),
        queries=str(queries),
        qrels=str(qrels),
        limit=2,
    )
    assert q["qid"].tolist() == ["q0"] and r["pid"].tolist() == ["0"]
    assert report.dropped_queries == 1


# --- bad input: one error naming the file, the line or row, and the problem -----------------


def ingest_error(tmp_path, **spec) -> str:
    with pytest.raises(InputError) as error:
        run_ingest(tmp_path, **spec)
    message = str(error.value)
    assert "\n" not in message
    return message


def test_missing_file(tmp_path):
    message = ingest_error(tmp_path, source="msmarco", path=str(tmp_path / "nope.tsv"))
    assert message == f"{tmp_path / 'nope.tsv'}: file not found"


def test_misnamed_column_in_parquet(tmp_path):
    pd.DataFrame({"id": ["a"], "body": ["x"]}).to_parquet(tmp_path / "c.parquet")
    message = ingest_error(
        tmp_path, source="parquet", path=str(tmp_path / "c.parquet"), columns={"pid": "id"}
    )
    assert "c.parquet: missing column(s) 'text' (for text)" in message
    assert "['body', 'id']" in message


# Bad input in each reader: (file, content, source, extra spec keys, the message's start),
# "{path}" standing for the file.
BAD_INPUTS = {
    "missing column in csv": (
        "c.csv", "pid,body\na,x\n", "csv", {},
        "{path}: missing column(s) 'text' (for text)",
    ),
    "missing field in jsonl": (
        "c.jsonl", '{"pid": "a", "text": "x"}\n{"pid": "b", "body": "y"}\n', "jsonl", {},
        "{path}, line 2: missing field 'text' (for text)",
    ),
    "missing field in msmarco": (
        "collection.tsv", "0\tok\n1 no tab here\n", "msmarco", {},
        "{path}, line 2: expected 2 tab-separated fields (pid, text), found 1",
    ),
    "extra field in msmarco": (
        "collection.tsv", "0\tok\n1\ttoo\tmany\n", "msmarco", {},
        "{path}, line 2: expected 2 tab-separated fields (pid, text), found 3",
    ),
    "bad dpr header": (
        "psgs.tsv", "pid\ttext\ttitle\n1\tx\tT\n", "dpr", {},
        "{path}, line 1: expected the header 'id<TAB>text<TAB>title'",
    ),
    "duplicate ids": (
        "collection.tsv", "0\ta\n1\tb\n0\tc\n", "msmarco", {},
        "{path}, line 3: duplicate passage id '0' (first at line 1)",
    ),
    "null text in jsonl": (
        "c.jsonl", '{"pid": "a", "text": null}\n', "jsonl", {},
        "{path}, line 1: text of passage 'a' is not a string",
    ),
    "invalid json": (
        "c.jsonl", '{"pid": "a", "text": "x"}\n{"pid": "b", "text": \n', "jsonl", {},
        "{path}, line 2: invalid JSON (Expecting value at column 22)",
    ),
    "empty corpus": ("collection.tsv", "", "msmarco", {}, "{path}: no passages found"),
    "non-integer position": (
        "c.csv", "pid,text,pos\na,x,1\nb,y,two\n", "csv",
        {"columns": {"position": "pos", "doc_id": "pid"}},
        "{path}, line 3: position 'two' is not an integer",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_is_one_message_naming_the_file_and_line(tmp_path, case):
    name, content, source, extra, expected = BAD_INPUTS[case]
    path = write(tmp_path / name, content)
    message = ingest_error(tmp_path, source=source, path=str(path), **extra)
    assert message.startswith(expected.format(path=path))


def test_duplicate_ids_across_batches(tmp_path, monkeypatch):
    monkeypatch.setattr("boolbench.corpus.sources.BATCH_ROWS", 2)
    path = write(tmp_path / "c.jsonl", "".join(f'{{"pid": "{p}", "text": "t"}}\n' for p in "abcda"))
    message = ingest_error(tmp_path, source="jsonl", path=str(path))
    assert message == f"{path}, line 5: duplicate passage id 'a' (first at line 1)"


def test_duplicate_ids_in_parquet_name_rows(tmp_path):
    pd.DataFrame({"pid": ["a", "b", "a"], "text": ["x", "y", "z"]}).to_parquet(tmp_path / "c.pq")
    message = ingest_error(tmp_path, source="parquet", path=str(tmp_path / "c.pq"))
    assert message == f"{tmp_path / 'c.pq'}, row 3: duplicate passage id 'a' (first at row 1)"


def test_whitespace_only_text_is_an_error(tmp_path):
    path = write(tmp_path / "collection.tsv", "0\tfine\n1\t   \n")
    message = ingest_error(tmp_path, source="msmarco", path=str(path))
    assert message.startswith(f"{path}, line 2: passage '1' has empty or whitespace-only text")
    assert "empty_text: drop" in message


def test_empty_text_can_be_dropped_and_counted(tmp_path):
    path = write(tmp_path / "c.jsonl", '{"pid": "a", "text": "x"}\n{"pid": "b", "text": ""}\n')
    corpus, _, _, report = run_ingest(tmp_path, source="jsonl", path=str(path), empty_text="drop")
    assert corpus["pid"].tolist() == ["a"]
    assert report.dropped_empty == 1
    metadata = pq.ParquetFile(tmp_path / "out" / "corpus.parquet").metadata.metadata
    assert json.loads(metadata[b"boolbench"])["dropped_empty"] == 1


@pytest.mark.parametrize("source", ["msmarco", "jsonl"])
def test_undecodable_bytes_name_the_line(tmp_path, source):
    if source == "msmarco":
        content = b"0\tok\n1\tfine\n2\tcaf\xe9 latin-1\n"
    else:
        content = (
            b'{"pid": "0", "text": "ok"}\n{"pid": "1", "text": "fine"}\n'
            b'{"pid": "2", "text": "caf\xe9"}\n'
        )
    path = write(tmp_path / "c.txt", content)
    message = ingest_error(tmp_path, source=source, path=str(path))
    assert message.startswith(f"{path}, line 3: undecodable bytes (not UTF-8)")


def test_invalid_json_says_what_and_where_in_full(tmp_path):
    # A raw tab inside a string: json's own message ends "Invalid control character at".
    path = write(tmp_path / "c.jsonl", '{"pid": "a", "text": "x"}\n{"pid": "b", "text": "a\tb"}\n')
    message = ingest_error(tmp_path, source="jsonl", path=str(path))
    assert message.endswith(
        f"{path}, line 2: invalid JSON (Invalid control character '\\t' at column 24: a JSON "
        "string holds it escaped)"
    )


def test_bad_qrels_relevance_names_the_line(tmp_path):
    collection = write(tmp_path / "collection.tsv", "0\ta\n")
    queries = write(tmp_path / "q.tsv", "q0\tfind a\n")
    qrels = write(tmp_path / "qrels.txt", "q0 0 0 1\nq0 0 0 yes\n")
    message = ingest_error(
        tmp_path, source="msmarco", path=str(collection), queries=str(queries), qrels=str(qrels)
    )
    assert message == f"{qrels}, line 2: relevance 'yes' is not an integer"


def test_failed_ingest_leaves_no_partial_output(tmp_path):
    path = write(tmp_path / "collection.tsv", "0\ta\n0\tb\n")
    ingest_error(tmp_path, source="msmarco", path=str(path))
    assert not list((tmp_path / "out").glob("*"))


def test_size_bounds_known_without_reading_the_corpus(tmp_path):
    from boolbench.corpus.sources import vital_articles_path

    articles = len(json.loads(vital_articles_path().read_text()))
    packaged = SourceSpec(source="vital_articles")
    assert packaged.size_bound(articles + 1) == (
        articles, f"the articles in {vital_articles_path()}"
    )  # fmt: skip
    assert packaged.size_bound(articles) is None  # may have enough
    assert SourceSpec(source="vital_articles", limit=60).size_bound(61) == (60, "limit: 60")
    assert SourceSpec(source="jsonl", path=str(tmp_path / "x.jsonl")).size_bound(10**9) is None
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"not parquet")
    assert SourceSpec(source="parquet", path=str(broken)).size_bound(10) is None
