"""The report's pages and figures, built from small hand-made artifacts."""

import copy
import json
import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest
import yaml

from boolbench.config import validate_config
from boolbench.errors import BoolbenchError
from boolbench.report.figures import (
    FIGURES,
    _metric,
    corpus_figures,
    figure_step,
    pass_rate_table,
)
from boolbench.report.pages import (
    corpus_config,
    llm_accounting,
    pick_examples,
    write_config,
    write_examples,
    write_llm_accounting,
    write_rankings,
)
from tests.conftest import tiny_config
from tests.html_tables import Tables


def accounting(tmp_path, name, **values):
    record = {
        "requests": 10,
        "cache_hits": 4,
        "api_calls": 7,
        "retries": 1,
        "failures": 0,
        "prompt_tokens": 1000,
        "completion_tokens": 200,
        "cached_prompt_tokens": 400,
        "cached_completion_tokens": 80,
        "estimated_cost": 0.25,
        "wall_s": 3.0,
        "errors": {},
    } | values
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(record))
    return path


def test_llm_accounting_has_a_row_per_job_and_a_total(tmp_path):
    paths = {
        "simple": accounting(tmp_path, "simple"),
        "filter_not": accounting(tmp_path, "filter_not", requests=5, estimated_cost=0.5),
    }
    table = llm_accounting(paths)
    assert table["step"].tolist() == ["simple", "filter_not", "total"]
    total = table.set_index("step").loc["total"]
    assert total["requests"] == 15 and total["estimated_cost"] == pytest.approx(0.75)
    write_llm_accounting(table, tmp_path / "a.csv", tmp_path / "a.html")
    rows = Tables((tmp_path / "a.html").read_text()).tables[0]
    assert rows[0][0] == "step" and rows[-1][:2] == ["total", "15"]
    assert pd.read_csv(tmp_path / "a.csv")["cache_hits"].tolist() == [4, 4, 8]


def test_a_broken_accounting_file_is_named(tmp_path):
    broken = tmp_path / "compose_and.json"
    broken.write_text("{not json")
    with pytest.raises(BoolbenchError, match="compose_and.json"):
        llm_accounting({"compose_and": broken})


def questions_frame():
    rows = []
    for kind in ("AND", "OR", "NOT"):
        for i in range(5):
            kept = i < 3
            rows.append(
                {
                    "qid": f"{kind.lower()}-{i}",
                    "type": kind,
                    "question": f"Which <b>{kind}</b> question {i}?",
                    "source": "llm",
                    "status": "ok",
                    "reason": None,
                    "operand_texts": [f"operand {i}a", f"operand {i}b"],
                    "positives": [f"p{i}"],
                    "negatives": [f"n{i}"],
                    "kept": kept,
                    "reject_reason": None if kept else "positive_refused",
                    "passes_default": kept,
                    "passes_strict": False,
                }
            )
    return pd.DataFrame(rows)


def test_examples_pick_kept_and_rejected_per_type_reproducibly():
    frame = questions_frame()
    picked = pick_examples(frame, per_type=2, seed=1)
    counts = picked.groupby(["type", "kept"]).size()
    assert counts.tolist() == [2, 2] * 3  # 2 kept + 2 rejected (of 2 rejected) per type
    assert picked["type"].tolist()[:4] == ["AND"] * 4
    assert picked.equals(pick_examples(frame, per_type=2, seed=1))


def test_examples_page_shows_passages_and_answers_escaped(tmp_path):
    frame = questions_frame()
    dropped = frame["qid"] == "not-4"
    frame.loc[dropped, ["question", "status", "reject_reason"]] = [None, "dropped", "dropped"]
    frame.to_parquet(tmp_path / "all.parquet")
    corpus = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(5)] + [f"n{i}" for i in range(5)],
            "title": [f"Title p{i}" for i in range(5)] + [f"Title n{i}" for i in range(5)],
            "text": ["word " * 100] * 10,
        }
    )
    corpus.to_parquet(tmp_path / "corpus.parquet")
    answers = pd.DataFrame(
        {"qid": ["and-0", "and-1", "and-2"], "pid": ["p0", "p1", "p2"], "role": ["positive"] * 3,
         "scope": ["question", "question", "expression"],
         "answer": ["the answer", None, None], "answered": [True, None, False]}
    )  # fmt: skip
    answers.to_parquet(tmp_path / "answers.parquet")
    out = tmp_path / "examples.html"
    write_examples(
        tmp_path / "all.parquet", tmp_path / "corpus.parquet", tmp_path / "answers.parquet",
        per_type=3, passage_words=5, seed=0, html_out=out,
    )  # fmt: skip
    html = out.read_text()
    assert "Which &lt;b&gt;AND&lt;/b&gt; question" in html  # question text is escaped
    tables = Tables(html).tables
    # per type: a header, 3 kept and the 2 rejected questions
    assert [len(t) for t in tables] == [6, 6, 6]
    assert "word word word word word \N{HORIZONTAL ELLIPSIS}" in html
    assert "answerer said:</i> the answer" in html  # and-0's positive passage
    assert "answerer: the call failed" in html  # and-1's positive passage
    assert "reading the operands: does not answer" in html  # and-2's, in expression scope
    assert html.count("rejected: positive_refused") == 5
    assert "(no question: dropped)" in html and "rejected: dropped" in html


def test_examples_page_of_no_question_is_written(tmp_path):
    """No question at all: the page, not an Arrow error from an empty passage filter."""
    questions_frame().iloc[:0].to_parquet(tmp_path / "all.parquet")
    pd.DataFrame({"pid": ["p"], "title": ["T"], "text": ["x"]}).to_parquet(tmp_path / "c.parquet")
    answers = pd.DataFrame(columns=["qid", "pid", "role", "scope", "answer", "answered"])
    answers.astype(str).to_parquet(tmp_path / "answers.parquet")
    out = tmp_path / "examples.html"
    write_examples(
        tmp_path / "all.parquet", tmp_path / "c.parquet", tmp_path / "answers.parquet",
        per_type=3, passage_words=5, seed=0, html_out=out,
    )  # fmt: skip
    assert [len(t) for t in Tables(out.read_text()).tables] == [1, 1, 1]  # headers only


def test_config_page_round_trips_through_validation(tmp_path):
    config = tiny_config(corpora={"a": {"source": "vital_articles", "limit": 5},
                                  "b": {"source": "vital_articles", "limit": 9}})  # fmt: skip
    validate_config(config)
    write_config(corpus_config(config, "b"), tmp_path / "c.yaml", tmp_path / "c.html")
    written = yaml.safe_load((tmp_path / "c.yaml").read_text())
    assert list(written["corpora"]) == ["b"]
    again = copy.deepcopy(written)
    validate_config(again)  # a valid --configfile that changes nothing
    assert again == written
    assert "<pre>" in (tmp_path / "c.html").read_text()


@pytest.fixture
def artifacts(tmp_path):
    metrics = []
    for model, base in (("m1", 0.4), ("m2", 0.6)):
        for kind, offset in (("ALL", 0.1), ("AND", 0.2), ("OR", 0.3), ("NOT", -0.2)):
            for metric in ("MRR@10", "NegRecall@10"):
                for labels, shift in (("completed", 0.0), ("group", -0.3)):
                    value = base + offset + shift
                    metrics.append(["boolquestions", model, labels, "all", kind, metric, value, 5])
    columns = ["query_set", "model", "labels", "split", "type", "metric", "value", "n_queries"]
    metrics = pd.DataFrame(metrics, columns=columns)
    metrics.to_parquet(tmp_path / "metrics.parquet")
    rng = np.random.default_rng(0)
    pd.DataFrame(
        {"pid": [f"p{i}" for i in range(50)], "cluster": rng.integers(0, 7, 50)}
    ).to_parquet(tmp_path / "groups.parquet")
    ratios = np.array([0.3, 0.2, 0.1])
    pd.DataFrame(
        {"component": [1, 2, 3], "explained_variance_ratio": ratios, "cumulative": ratios.cumsum()}
    ).to_parquet(tmp_path / "variance.parquet")
    frame = questions_frame()
    frame.loc[0, "status"] = "fallback"
    frame.to_parquet(tmp_path / "all.parquet")
    for step in ("simple", "disjunctive"):
        pd.DataFrame({"status": ["ok", "ok", "dropped", "ok"]}).to_parquet(
            tmp_path / f"{step}.parquet"
        )
    return tmp_path


@pytest.mark.parametrize("name", list(FIGURES))
def test_every_figure_writes_a_png_and_an_svg(artifacts, name):
    inputs = {
        "metrics": artifacts / "metrics.parquet",
        "groups": artifacts / "groups.parquet",
        "variance": artifacts / "variance.parquet",
        "all": artifacts / "all.parquet",
        "simple": artifacts / "simple.parquet",
        "disjunctive": artifacts / "disjunctive.parquet",
    }
    png, svg = artifacts / f"{name}.png", artifacts / f"{name}.svg"
    figure_step(name, inputs, {"models": ["m1", "m2"], "split": "all"}, png, svg)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    root = ET.parse(svg).getroot()
    assert root.tag.endswith("svg")
    first = svg.read_bytes()
    figure_step(name, inputs, {"models": ["m1", "m2"], "split": "all"}, png, svg)
    assert svg.read_bytes() == first  # no timestamps: a rerun on the same data is identical


def test_the_retrieval_figures_show_the_completed_labels(artifacts, tmp_path):
    metrics = pd.read_parquet(artifacts / "metrics.parquet")
    values = _metric(metrics, "MRR@10", "all")
    assert values.loc["m1", "NOT"] == pytest.approx(100 * (0.4 - 0.2))  # not the group's 0.1
    figure_step(
        "mrr_by_type", {"metrics": artifacts / "metrics.parquet"},
        {"models": ["m1", "m2"], "split": "all"}, tmp_path / "f.png", tmp_path / "f.svg",
    )  # fmt: skip
    assert "completed labels" in (tmp_path / "f.svg").read_text()


@pytest.mark.parametrize("name", ["mrr_by_type", "negrecall_vs_mrr"])
def test_a_retrieval_figure_of_a_split_without_questions_says_so(artifacts, name):
    inputs = {"metrics": artifacts / "metrics.parquet"}
    png, svg = artifacts / f"{name}.png", artifacts / f"{name}.svg"
    # The metrics have the `all` split only.
    figure_step(name, inputs, {"models": ["m1", "m2"], "split": "train"}, png, svg)
    assert "No question in the train split" in svg.read_text()
    figure_step(name, inputs, {"models": ["m1", "m2"], "split": "all"}, png, svg)
    assert "No question in" not in svg.read_text()


def test_pass_rates_are_those_of_validation_and_the_filter(artifacts):
    atomic = {s: pd.read_parquet(artifacts / f"{s}.parquet") for s in ("simple", "disjunctive")}
    rates = pass_rate_table(pd.read_parquet(artifacts / "all.parquet"), atomic)
    assert rates.loc["simple", "validation"] == 0.75
    assert rates.loc["AND", "validation"] == pytest.approx(4 / 5)  # one fallback of 5
    assert rates.loc["OR", "filter (default)"] == pytest.approx(3 / 5)
    assert np.isnan(rates.loc["simple", "filter (default)"])


def test_rankings_mark_pooled_judgements_apart_and_read_only_kept_questions(tmp_path):
    """'+'/'-' for the group labels, 'p+'/'p-' (italic) for the pooled judgements, unjudged
    passages plain; a pooled positive above the excluded passage is no inversion; a question
    the run holds but the dataset does not is not shown."""
    questions = pd.DataFrame(
        [("not-1", "NOT", "Not one?", ["a"], ["b"], ["c"], ["d"]),
         ("not-2", "NOT", "Not two?", ["e"], ["f"], [], [])],
        columns=["qid", "type", "question", "positives", "negatives", "pooled_positives",
                 "pooled_negatives"],
    )  # fmt: skip
    questions.to_parquet(tmp_path / "q.parquet")
    pids = list("abcdefxz")
    corpus = pd.DataFrame({"pid": pids, "title": [p.upper() for p in pids]})
    corpus["text"] = [f"text {p}" for p in pids]
    corpus.to_parquet(tmp_path / "c.parquet")
    run = pd.DataFrame(
        [("not-1", "c", 1), ("not-1", "b", 2), ("not-1", "d", 3), ("not-1", "x", 4),
         ("not-1", "a", 5),  # the pooled positive c above the excluded b: no inversion
         ("not-2", "f", 1), ("not-2", "e", 2),  # the excluded f first: an inversion
         ("rejected-1", "z", 1)],  # a written question the filter rejected
        columns=["qid", "pid", "rank"],
    )  # fmt: skip
    run["score"] = 1.0 / run["rank"]
    run.to_parquet(tmp_path / "m.parquet")
    write_rankings(
        tmp_path / "q.parquet", tmp_path / "c.parquet", {"m": tmp_path / "m.parquet"},
        top=10, max_questions=10, html_out=tmp_path / "r.html",
    )  # fmt: skip
    page = (tmp_path / "r.html").read_text()
    assert '<span class="kept"><b>+ A</b></span>' in page
    assert '<span class="rejected"><b>- B</b></span>' in page
    assert '<span class="kept pooled"><b>p+ C</b></span>' in page
    assert '<span class="rejected pooled"><b>p- D</b></span>' in page
    assert ">X</span>" in page and "<b>X" not in page  # unjudged: plain
    assert "rejected-1" not in page and ">Z<" not in page
    assert "1 of 2 NOT questions" in page and page.index("not-2") < page.index("not-1")


@pytest.mark.parametrize(
    ("imported", "grouping", "left_out"),
    [(False, "cluster", set()), (False, "document", {"svd_variance"}),
     (True, "cluster", {"group_sizes", "svd_variance", "pass_rates"})],
)  # fmt: skip
def test_a_corpus_shows_the_figures_it_has_data_for(imported, grouping, left_out):
    # Grouping by document computes no SVD; imported questions were not generated here.
    assert set(FIGURES) - set(corpus_figures(imported, grouping)) == left_out
