"""The DRC paper's document-scoped recall: which queries are scoped, the exact document-scoped
runs of dense and BM25 models and of a cross-encoder, and the scores and table they feed."""

import math

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.retrieval.bm25 import BM25Index, build_bm25
from boolbench.retrieval.dense import (
    DenseIndex,
    build_index,
    load_index,
    search_vectors,
    search_vectors_of,
)
from boolbench.retrieval.document_scope import DocumentScope, document_scope, relevant_of_qrels
from boolbench.retrieval.embeddings import save_npy_atomic
from boolbench.retrieval.encoders import load_dense_encoder
from boolbench.retrieval.evaluation import aggregate, score_model, write_document_recall_table
from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.rerank import load_cross_encoder, rerank_document_run
from boolbench.retrieval.runs import RUN_SCHEMA, QuerySet, read_run, write_run
from boolbench.retrieval.search import document_run, search, search_sets
from tests.tiny_corpus import PASSAGES
from tests.tiny_models import tiny_cross_encoder

WORDS = ["river", "castle", "engine", "violin", "comet", "glacier", "harbor", "orchard"]


def corpus_frame() -> pd.DataFrame:
    """Document d0 (12 passages), d1 (4), d2 (1), and 8 passages without a document."""
    rows = []
    for doc, size in (("d0", 12), ("d1", 4), ("d2", 1), (None, 8)):
        for i in range(size):
            pid = f"{doc or 'x'}-{i:02d}"
            text = f"{WORDS[i % 8]} {WORDS[(3 * i + len(rows)) % 8]} passage {pid}"
            rows.append((pid, text, doc, i if doc else 0))
    return pd.DataFrame(rows, columns=["pid", "text", "doc_id", "position"])


def write_corpus(path, frame=None) -> str:
    frame = corpus_frame() if frame is None else frame
    schema = pa.schema(
        [("pid", pa.string()), ("text", pa.string()), ("doc_id", pa.string()),
         ("position", pa.int64())]
    )  # fmt: skip
    pq.write_table(pa.Table.from_pandas(frame, schema=schema, preserve_index=False), path)
    return str(path)


def test_a_query_is_scoped_when_its_relevant_passages_share_one_large_enough_document(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.parquet")
    relevant = {
        "one": {"d0-03", "d0-07"},
        "small": {"d1-01"},
        "spans": {"d0-01", "d1-00"},
        "single": {"d2-00"},  # a document of one passage: below min_passages
        "no-doc": {"x-02"},
        "missing": {"d0-01", "not-in-corpus"},
        "none": set(),
    }
    scope = document_scope(corpus, relevant, min_passages=2)
    assert scope.document_of == {"one": "d0", "small": "d1"}
    assert scope.pids_of("one") == [f"d0-{i:02d}" for i in range(12)]  # corpus order
    assert scope.sizes() == {"one": 12, "small": 4}
    assert "spans" not in scope and "one" in scope
    assert document_scope(corpus, relevant, min_passages=5).document_of == {"one": "d0"}
    qrels = pd.DataFrame(
        {"qid": ["a", "a", "b"], "pid": ["d0-01", "d1-00", "d1-02"], "relevance": [1, 0, 2]}
    )
    assert relevant_of_qrels(qrels) == {"a": {"d0-01"}, "b": {"d1-02"}}  # relevance 0: not


def test_dense_document_run_ranks_every_passage_exactly_beyond_the_search_depth(tmp_path):
    rng = np.random.default_rng(3)
    pids = np.asarray([f"p{i:03d}" for i in range(200)], dtype=object)
    vectors = rng.normal(size=(200, 8)).astype(np.float32) * rng.uniform(0.5, 3, (200, 1))
    doc = list(pids[50:90])  # a document of 40 passages
    scope = DocumentScope({"q": "doc"}, {"doc": doc})
    query = rng.normal(size=(2, 8)).astype(np.float32)
    model = ModelSpec(name="m", kind="onnx", similarity="cosine", index={"type": "flat"})
    save_npy_atomic(vectors, tmp_path / "emb.npy")
    pq.write_table(pa.table({"pid": list(pids)}), tmp_path / "emb.pids.parquet")
    build_index(tmp_path / "emb.npy", model, tmp_path / "i.faiss", seed=1)
    wide = search_vectors(
        load_index(tmp_path / "i.faiss", model), query, ["r", "q"], pids, model, 5
    )

    index = DenseIndex(model, tmp_path / "i.faiss", tmp_path / "emb.npy")
    run = document_run(index, search_vectors_of(query, model), ["r", "q"], scope)
    assert set(run["qid"]) == {"q"} and sorted(run["pid"]) == sorted(doc)
    assert run["rank"].tolist() == list(range(1, 41))
    normed = vectors[50:90] / np.linalg.norm(vectors[50:90], axis=1, keepdims=True)
    cosine = normed @ (query[1] / np.linalg.norm(query[1]))
    assert run["pid"].tolist() == [doc[i] for i in np.argsort(-cosine, kind="stable")]
    assert np.allclose(run["score"], np.sort(cosine)[::-1], atol=1e-6)
    # The corpus-wide run keeps 5 passages; the document run still ranks the others.
    assert len(set(doc) - set(wide[wide.qid == "q"]["pid"])) >= 35
    # Where both score a passage, they agree (same similarity as the index).
    both = wide[wide.qid == "q"].merge(run, on="pid", suffixes=("_wide", "_doc"))
    assert np.allclose(both["score_wide"], both["score_doc"], atol=1e-5)


def query_files(tmp_path, questions, queries, qrels):
    pd.DataFrame(
        questions, columns=["qid", "question", "type", "split", "positives", "negatives"]
    ).to_parquet(tmp_path / "questions.parquet")
    pd.DataFrame(queries, columns=["qid", "text"]).to_parquet(tmp_path / "queries.parquet")
    frame = pd.DataFrame(qrels, columns=["qid", "pid", "relevance"])
    frame.astype({"relevance": "int32"}).to_parquet(tmp_path / "qrels.parquet")
    return [str(tmp_path / f"{n}.parquet") for n in ("questions", "queries", "qrels")]


QUESTIONS = [
    ("and-1", "river castle", "AND", "test", ["d0-00", "d0-05"], ["d0-03"]),
    ("or-1", "engine violin", "OR", "train", ["d0-02", "d1-02"], []),  # two documents
    ("not-1", "comet harbor", "NOT", "test", ["d1-03"], ["d1-00"]),
]
QUERIES = [("o1", "glacier orchard"), ("o2", "harbor violin")]
QRELS = [("o1", "d1-01", 1), ("o2", "x-01", 1)]


def searched(tmp_path, model, depth):
    corpus = write_corpus(tmp_path / "corpus.parquet")
    questions, queries, qrels = query_files(tmp_path, QUESTIONS, QUERIES, QRELS)
    out = [str(tmp_path / f"{n}.parquet") for n in ("run", "orig", "doc", "doc_orig")]
    if model.kind == "bm25":
        build_bm25(corpus, model, tmp_path / "bm25")
        index, embeddings = tmp_path / "bm25", None
    else:
        texts = corpus_frame()["text"].tolist()
        embeddings = tmp_path / "emb.npy"
        save_npy_atomic(load_dense_encoder(model).encode_passages(texts), embeddings)
        pq.write_table(pa.table({"pid": corpus_frame()["pid"]}), tmp_path / "emb.pids.parquet")
        index = tmp_path / "i.faiss"
        build_index(embeddings, model, index, seed=1)
    search(
        model, index, embeddings, questions, queries, qrels, corpus, depth,
        min_document_passages=2, out=tuple(out[:2]), document_out=tuple(out[2:]),
    )  # fmt: skip
    for path in out:
        assert pq.read_schema(path).equals(RUN_SCHEMA, check_metadata=False)
    return [read_run(p) for p in out]


def test_bm25_document_runs_cover_the_whole_document_with_zero_scores_last(tmp_path):
    model = ModelSpec(name="bm25", kind="bm25", stopwords="en", stemmer=None)
    run, _, document, document_original = searched(tmp_path, model, depth=3)
    texts = {q: text for q, text, *_ in QUESTIONS}
    ((full, _),) = search_sets(
        BM25Index(model, tmp_path / "bm25"), [QuerySet(list(texts), [*texts.values()])], 100
    )
    d0, d1 = corpus_frame().query("doc_id == 'd0'"), corpus_frame().query("doc_id == 'd1'")
    assert list(dict.fromkeys(document["qid"])) == ["and-1", "not-1"]  # or-1 spans two docs
    assert sorted(document[document.qid == "and-1"]["pid"]) == sorted(d0["pid"])
    assert sorted(document[document.qid == "not-1"]["pid"]) == sorted(d1["pid"])
    assert document_original["qid"].unique().tolist() == ["o1"]  # o2's passage has no doc
    for qid, ranked in document.groupby("qid"):
        assert ranked["rank"].tolist() == list(range(1, len(ranked) + 1))
        assert ranked["score"].is_monotonic_decreasing
        zero = ranked[ranked.score == 0]
        assert len(zero) > 0  # passages without a shared term are ranked, not dropped
        assert zero["pid"].tolist() == sorted(zero["pid"], reverse=True)  # the tie rule
        # The scores of a search of the whole corpus (0: not retrieved there).
        wide = full[full.qid == qid].set_index("pid")["score"]
        assert np.allclose(ranked["score"], [wide.get(p, 0.0) for p in ranked["pid"]])
        assert len(run[run.qid == qid]) <= 3 < len(ranked)
    # A positive beyond the depth-3 run is still ranked in its document.
    assert "d0-05" not in set(run[run.qid == "and-1"]["pid"])
    assert "d0-05" in set(document[document.qid == "and-1"]["pid"])


def test_dense_search_writes_exact_document_runs(tmp_path):
    # The bundled MiniLM-L3 (the tiny random models embed these texts all alike).
    model = ModelSpec(name="l3", kind="onnx", normalize=False, similarity="cosine")
    run, _, document, document_original = searched(tmp_path, model, depth=2)
    encoder = load_dense_encoder(model)
    frame = corpus_frame().query("doc_id == 'd0'")
    passages = encoder.encode_passages(frame["text"].tolist())
    passages /= np.linalg.norm(passages, axis=1, keepdims=True)
    question = encoder.encode_queries(["river castle"])[0]
    cosine = passages @ (question / np.linalg.norm(question))
    ranked = document[document.qid == "and-1"]
    assert ranked["pid"].tolist() == frame["pid"].iloc[np.argsort(-cosine)].tolist()
    assert np.allclose(ranked["score"], np.sort(cosine)[::-1], atol=1e-5)
    # A positive below the corpus-wide depth of 2 is still found in the document run.
    missed = {"d0-00", "d0-05"} - set(run[run.qid == "and-1"]["pid"])
    assert missed and missed <= set(ranked["pid"])
    assert document_original["qid"].tolist() == ["o1"] * 4


def test_cross_encoder_reranks_the_document_run_to_its_depth_and_keeps_the_rest(tmp_path):
    model = load_cross_encoder(
        ModelSpec(name="ce", kind="cross-encoder", model=str(tiny_cross_encoder(tmp_path)))
    )
    # Texts the tiny random cross-encoder tells apart (it scores near-duplicates alike).
    texts = {**PASSAGES, "r1": "Comets have tails.", "r2": "Harbors shelter ships."}
    pids = list(PASSAGES)
    base = pd.DataFrame(
        {
            "qid": ["q"] * 5 + ["r"] * 2,
            "pid": [*pids, "r1", "r2"],
            "rank": [1, 2, 3, 4, 5, 1, 2],
            "score": [9.0, 8.0, 7.0, 6.0, 5.0, 2.0, 1.0],
        }
    )
    queries = {"q": "where do cats sleep", "r": "comet"}
    run = rerank_document_run(base, queries, texts, model, depth=3)
    q = run[run.qid == "q"]
    expected = model.predict([(queries["q"], texts[p]) for p in pids[:3]])
    assert len(set(expected.round(6))) == 3  # distinct scores: the order is the model's
    assert q["pid"].tolist()[:3] == [pids[i] for i in np.argsort(-expected)]
    assert q["pid"].tolist()[3:] == pids[3:]  # below the depth: the base order
    assert q["rank"].tolist() == list(range(1, 6)) and q["score"].is_monotonic_decreasing
    assert np.allclose(sorted(q["score"][:3]), sorted(expected), atol=1e-6)
    assert len(run[run.qid == "r"]) == 2  # a document within the depth: all re-ranked
    empty = base.iloc[:0]
    assert rerank_document_run(empty, queries, texts, model, depth=3).empty


def written_run(path, ranked: dict[str, list[str]]):
    rows = [(q, p, r, -float(r)) for q, ps in ranked.items() for r, p in enumerate(ps, 1)]
    write_run(pd.DataFrame(rows, columns=["qid", "pid", "rank", "score"]), path)
    return path


def scores_of(tmp_path, document_ranked, original_ranked, min_passages=2, model="m"):
    corpus = write_corpus(tmp_path / "corpus.parquet")
    questions, _, qrels = query_files(tmp_path, QUESTIONS, QUERIES, QRELS)
    wide = written_run(tmp_path / "wide.parquet", {"and-1": ["d0-00"]})
    return score_model(
        model,
        wide,
        wide,
        pd.read_parquet(questions),
        pd.read_parquet(qrels),
        written_run(tmp_path / f"doc-{model}.parquet", document_ranked),
        written_run(tmp_path / f"doc-orig-{model}.parquet", original_ranked),
        corpus,
        percents=[5, 20, 50],
        min_document_passages=min_passages,
    )


def test_scores_carry_recall_at_percent_and_the_table_shows_it(tmp_path):
    d0 = ["d0-00", *(f"d0-{i:02d}" for i in range(1, 12) if i != 5), "d0-05"]  # 12 passages
    d1 = ["d1-00", "d1-01", "d1-02", "d1-03"]
    scores = scores_of(tmp_path, {"and-1": d0, "not-1": d1}, {"o1": d1})
    assert list(scores.columns[-3:]) == ["Recall@5%", "Recall@20%", "Recall@50%"]
    # Without pooled labels the two label sets give the same rows.
    group, completed = (
        scores[scores.labels == s].drop(columns="labels") for s in ("group", "completed")
    )
    assert group.reset_index(drop=True).equals(completed.reset_index(drop=True))
    by_qid = completed.set_index("qid")
    # and-1: cuts 1, 3 and 6 of 12; positives at ranks 1 and 12.
    assert by_qid.loc["and-1", ["Recall@5%", "Recall@20%", "Recall@50%"]].tolist() == [0.5] * 3
    # not-1: cuts 1, 1, 2 of 4; its positive at rank 4. o1: at rank 2.
    assert by_qid.loc["not-1", ["Recall@5%", "Recall@50%"]].tolist() == [0.0, 0.0]
    assert by_qid.loc["o1", ["Recall@20%", "Recall@50%"]].tolist() == [0.0, 1.0]
    assert by_qid.loc[["or-1", "o2"], "Recall@50%"].isna().all()  # two documents; no document
    assert by_qid.loc["and-1", "MRR@10"] == 1.0  # the corpus-wide metrics are unchanged

    other = scores_of(tmp_path, {"and-1": list(reversed(d0))}, {}, model="n")
    metrics = aggregate(pd.concat([scores, other], ignore_index=True))
    picked = metrics[metrics.labels == "completed"]
    picked = picked.set_index(["model", "query_set", "split", "type", "metric"])
    assert picked.loc[("m", "boolquestions", "all", "ALL", "Recall@50%"), "n_queries"] == 2
    assert picked.loc[("m", "boolquestions", "all", "ALL", "Recall@50%"), "value"] == 0.25
    assert picked.loc[("m", "original", "all", "ALL", "Recall@50%"), "value"] == 1.0

    out = {ext: str(tmp_path / f"document_recall.{ext}") for ext in ("csv", "md", "html")}
    write_document_recall_table(metrics, ["m", "n"], "all", [5, 20, 50], 2, out)
    table = pd.read_csv(out["csv"]).set_index("model")
    assert list(table.columns[:5]) == [
        "Recall@5% ALL", "Recall@5% AND", "Recall@5% OR", "Recall@5% NOT", "Recall@5% original"
    ]  # fmt: skip
    assert table.loc["m", "Recall@50% ALL"] == 25.0  # percent
    assert table.loc["n", "Recall@50% AND"] == 50.0  # and-1 reversed: positive 5 at rank 8
    assert math.isnan(table.loc["m", "Recall@50% OR"])  # no OR question is scoped
    markdown = (tmp_path / "document_recall.md").read_text()
    assert "ALL 2, AND 1, OR 0, NOT 1, original queries 1" in markdown
    assert "| m |" in markdown and "<b>" in (tmp_path / "document_recall.html").read_text()


def test_the_document_scope_follows_the_label_set(tmp_path):
    """A pooled positive in another document unscopes a question under the completed labels
    only; one in the same document counts in its recall."""
    d0 = [f"d0-{i:02d}" for i in range(12)]
    questions = [
        (*QUESTIONS[0], ["d1-01"]),  # and-1: a pooled positive in d1
        (*QUESTIONS[2], ["d1-01"]),  # not-1: a pooled positive in its own document, d1
    ]
    corpus = write_corpus(tmp_path / "corpus.parquet")
    frame = pd.DataFrame(
        questions, columns=["qid", "question", "type", "split", "positives", "negatives"]
        + ["pooled_positives"]
    )  # fmt: skip
    wide = written_run(tmp_path / "wide.parquet", {"and-1": ["d0-00"]})
    scores = score_model(
        "m", wide, wide, frame, pd.DataFrame(QRELS, columns=["qid", "pid", "relevance"]),
        written_run(tmp_path / "doc.parquet", {"and-1": d0, "not-1": ["d1-01", "d1-03"]}),
        written_run(tmp_path / "doc-orig.parquet", {}), corpus, percents=[25, 50],
        min_document_passages=2,
    )  # fmt: skip
    by = scores[scores.query_set == "boolquestions"].set_index(["labels", "qid"])
    assert by.loc[("group", "and-1"), "Recall@50%"] == 1.0  # d0-00 and d0-05 in the top 6
    assert math.isnan(by.loc[("completed", "and-1"), "Recall@50%"])  # spans d0 and d1
    # not-1 in d1 (4 passages): top 1 at 25%, top 2 at 50%; d1-03 is its group positive.
    assert by.loc[("group", "not-1"), ["Recall@25%", "Recall@50%"]].tolist() == [0.0, 1.0]
    assert by.loc[("completed", "not-1"), ["Recall@25%", "Recall@50%"]].tolist() == [0.5, 1.0]


def test_the_table_says_so_in_one_line_when_no_query_is_scoped(tmp_path):
    scores = scores_of(tmp_path, {}, {}, min_passages=50)
    assert scores["Recall@5%"].isna().all()
    out = {ext: str(tmp_path / f"document_recall.{ext}") for ext in ("csv", "md", "html")}
    write_document_recall_table(aggregate(scores), ["m"], "all", [5, 20, 50], 50, out)
    markdown = (tmp_path / "document_recall.md").read_text()
    assert markdown.count("\n") == 1 and markdown.startswith("No query")
    assert "at least 50" in markdown
    assert pd.read_csv(out["csv"])["note"].tolist() == [markdown.strip()]
    assert "<table>" not in (tmp_path / "document_recall.html").read_text()
