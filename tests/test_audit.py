"""The label audit (sheet, key, judgements, figures, LLM judge) and the per-question rankings
page."""

import math

import pandas as pd
import pytest

from boolbench.errors import InputError
from boolbench.generation.audit import (
    CONFUSION_COLUMNS,
    KEY_COLUMNS,
    SHEET_COLUMNS,
    audit_sheet,
    by_model,
    confusion,
    confusion_step,
    judge_sheet,
    judged_pairs,
    read_judgements,
    sample_questions,
    sheet_step,
)
from boolbench.generation.filtering import AnswererSettings
from boolbench.llm import LLMClient, LLMSettings
from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.report.pages import ranking_rows, write_rankings
from tests import scripted_llm
from tests.scripted_llm import prompt, respond


def kept(counts=None) -> pd.DataFrame:
    """Questions per type (default 20 AND, 20 OR, 3 NOT), each with positives and negatives."""
    counts = counts or {"AND": 20, "OR": 20, "NOT": 3}
    rows = []
    for kind, n in counts.items():
        for i in range(n):
            qid = f"{kind.lower()}-{i:05d}"
            rows.append((qid, kind, f"Question {qid}?", [f"{qid}-p"], [f"{qid}-n1", f"{qid}-n2"]))
    return pd.DataFrame(rows, columns=["qid", "type", "question", "positives", "negatives"])


def test_the_sample_is_seeded_and_as_even_over_the_types_as_they_allow():
    sample = sample_questions(kept(), 32, seed=5)
    assert sample["type"].value_counts().to_dict() == {"AND": 15, "OR": 14, "NOT": 3}
    assert sample["qid"].tolist() == sample_questions(kept(), 32, seed=5)["qid"].tolist()
    assert sample["qid"].tolist() != sample_questions(kept(), 32, seed=6)["qid"].tolist()
    assert len(sample_questions(kept(), 100, seed=5)) == 43  # all there are


# A dataset with every kind of label, and two models' runs (qid, pid, rank).
LABELLED = pd.DataFrame(
    [("and-1", "AND", "Alpha and beta?", ["a1"], ["a2", "a3"], ["a4"], ["a5"]),
     ("or-1", "OR", "Omicron or what is rho?", ["o1", "o2"], ["o3"], [], []),
     ("not-1", "NOT", "Nu but not zeta?", ["n1"], ["n2"], ["n3", "n4"], [])],
    columns=["qid", "type", "question", "positives", "negatives", "pooled_positives",
             "pooled_negatives"],
)  # fmt: skip
RUNS = {
    "m1": [("and-1", "a1", 1), ("and-1", "x1", 2), ("and-1", "a2", 3), ("and-1", "x2", 4),
           ("or-1", "o1", 1), ("or-1", "y1", 2), ("not-1", "n2", 1), ("not-1", "z1", 2),
           ("not-1", "z2", 3)],
    "m2": [("and-1", "x1", 1), ("and-1", "x3", 2), ("and-1", "a1", 3), ("or-1", "y1", 1),
           ("or-1", "y2", 2), ("not-1", "z1", 1), ("not-1", "n3", 2), ("not-1", "z3", 3)],
}  # fmt: skip
# What the key must say: label and ranked_by of every (question, passage).
KEY = {
    ("and-1", "a1"): ("positive", "m1@1 m2@3"), ("and-1", "a2"): ("negative", "m1@3"),
    ("and-1", "a3"): ("negative", ""), ("and-1", "a4"): ("pooled_positive", ""),
    ("and-1", "a5"): ("pooled_negative", ""), ("and-1", "x1"): ("unjudged", "m1@2 m2@1"),
    ("and-1", "x2"): ("unjudged", "m1@4"), ("and-1", "x3"): ("unjudged", "m2@2"),
    ("or-1", "o1"): ("positive", "m1@1"), ("or-1", "o2"): ("positive", ""),
    ("or-1", "o3"): ("negative", ""), ("or-1", "y1"): ("unjudged", "m1@2 m2@1"),
    ("or-1", "y2"): ("unjudged", "m2@2"), ("not-1", "n1"): ("positive", ""),
    ("not-1", "n2"): ("negative", "m1@1"), ("not-1", "n3"): ("pooled_positive", "m2@2"),
    ("not-1", "n4"): ("pooled_positive", ""), ("not-1", "z1"): ("unjudged", "m1@2 m2@1"),
    ("not-1", "z2"): ("unjudged", "m1@3"), ("not-1", "z3"): ("unjudged", "m2@3"),
}  # fmt: skip


def runs() -> dict[str, pd.DataFrame]:
    return {m: pd.DataFrame(rows, columns=["qid", "pid", "rank"]) for m, rows in RUNS.items()}


def texts(pids) -> dict[str, str]:
    return {p: f"text of {p}" for p in pids}


def test_the_sheet_holds_labelled_and_top_ranked_passages_once_and_the_key_their_labels():
    sheet, key = audit_sheet(LABELLED, runs(), texts(p for _, p in KEY), seed=1)
    assert sheet.columns.tolist() == SHEET_COLUMNS and "label" not in sheet.columns
    assert key.columns.tolist() == KEY_COLUMNS
    assert sheet[["qid", "pid"]].equals(key[["qid", "pid"]])  # row by row
    found = {(r.qid, r.pid): (r.label, r.ranked_by) for r in key.itertuples()}
    assert found == KEY and len(key) == len(KEY)  # each passage once per question
    assert dict(zip(key["label"], key["source"], strict=True)) == {
        "positive": "group", "negative": "group", "pooled_positive": "pooled",
        "pooled_negative": "pooled", "unjudged": "",
    }  # fmt: skip
    assert (sheet[SHEET_COLUMNS[5:]] == "").all().all()
    assert (sheet["passage"] == "text of " + sheet["pid"]).all()
    assert sheet.groupby("qid")["question"].first().to_dict() == dict(
        zip(LABELLED["qid"], LABELLED["question"], strict=True)
    )


def test_a_dataset_without_pooled_columns_has_group_labels_and_unjudged_passages_only():
    old = LABELLED.drop(columns=["pooled_positives", "pooled_negatives"])
    _, key = audit_sheet(old, runs(), {}, seed=1)
    assert set(key["label"]) == {"positive", "negative", "unjudged"}
    assert ("not-1", "n3") in set(zip(key["qid"], key["pid"], strict=True))  # ranked by m2


def test_passages_are_shuffled_within_each_question_with_the_seed():
    """Positives first on every question (as the sheet used to be) would give labels away."""
    questions = kept({"AND": 20, "OR": 20, "NOT": 0})
    _, key = audit_sheet(questions, {}, {}, seed=3)
    first = key.groupby("qid", sort=False)["label"].first()
    assert 0 < (first == "positive").sum() < len(first)  # a third of them, by chance
    again = audit_sheet(questions, {}, {}, seed=3)[1]
    assert key.equals(again)
    other = audit_sheet(questions, {}, {}, seed=4)[1]
    assert not key["pid"].equals(other["pid"]) and set(key["pid"]) == set(other["pid"])


def write_inputs(tmp_path, questions: pd.DataFrame):
    """boolquestions.parquet, corpus.parquet and the two runs as the workflow writes them."""
    questions.to_parquet(tmp_path / "q.parquet")
    pids = sorted({p for _, p in KEY})
    corpus = pd.DataFrame({"pid": pids, "title": pids, "text": [f"text of {p}" for p in pids]})
    corpus.to_parquet(tmp_path / "corpus.parquet")
    paths = {}
    for model, run in runs().items():
        paths[model] = tmp_path / f"{model}.parquet"
        run.assign(rank=run["rank"].astype("int32"), score=1.0 / run["rank"]).to_parquet(
            paths[model]
        )
    return paths


def outputs(tmp_path) -> dict:
    names = {"csv_out": "sheet.csv", "key_out": "key.csv", "html_out": "sheet.html"}
    return {arg: tmp_path / name for arg, name in names.items()}


def test_the_sheet_step_reads_each_models_top_depth_and_hides_the_labels(tmp_path):
    paths = write_inputs(tmp_path, LABELLED)
    out = outputs(tmp_path)
    sheet_step(tmp_path / "q.parquet", tmp_path / "corpus.parquet", paths, 3, 3, 1, **out)
    sheet = pd.read_csv(out["csv_out"], dtype=str, keep_default_na=False)
    key = pd.read_csv(out["key_out"], dtype=str, keep_default_na=False)
    assert sheet.columns.tolist() == SHEET_COLUMNS
    assert ("and-1", "x2") not in set(zip(key["qid"], key["pid"], strict=True))  # rank 4 > 3
    assert len(key) == len(KEY) - 1 and (sheet["passage"] == "text of " + sheet["pid"]).all()
    page = out["html_out"].read_text()
    assert "3 questions drawn with seed 1" in page and "top 3 of m1, m2" in page
    for word in ("pooled_positive", "unjudged", "<details>", "label:"):
        assert word not in page
    assert page.count("<li>") == len(sheet)


def test_no_kept_question_gives_an_empty_sheet_and_key_that_say_why(tmp_path):
    """The filter kept nothing: no Arrow error from filtering on an empty list of passages."""
    empty = LABELLED.head(0)
    paths = write_inputs(tmp_path, empty)
    for path in paths.values():  # runs of written questions only: none kept
        pd.read_parquet(path).head(0).to_parquet(path)
    out = outputs(tmp_path)
    sheet_step(tmp_path / "q.parquet", tmp_path / "corpus.parquet", paths, 32, 10, 1, **out)
    assert pd.read_csv(out["csv_out"]).columns.tolist() == SHEET_COLUMNS
    assert len(pd.read_csv(out["csv_out"])) == 0 and len(pd.read_csv(out["key_out"])) == 0
    assert "No question to audit" in out["html_out"].read_text()
    # ... and the judgements of an empty sheet give figures over nothing, not an error.
    confusion_step(
        out["csv_out"], out["key_out"], out["csv_out"], "test", 10,
        tmp_path / "c.csv", tmp_path / "m.csv", tmp_path / "c.html",
    )  # fmt: skip
    table = pd.read_csv(tmp_path / "c.csv").set_index("type")
    assert table.loc["ALL", "questions"] == 0 and table.loc["ALL", "n_group_labels_right"] == 0
    assert "holds no question" in (tmp_path / "c.html").read_text()


# Hand-made judgements of the LABELLED sheet (blank: not judged).
ANSWERS = {
    "a1": "yes", "a2": "no", "a3": "yes", "a4": "yes", "a5": "yes", "x1": "yes", "x2": "no",
    "x3": "no", "o1": "yes", "o2": "no", "o3": "no", "y1": "no", "y2": "", "n1": "yes",
    "n2": "no", "n3": "yes", "n4": "no", "z1": "yes", "z2": "no", "z3": "no",
}  # fmt: skip
MEETS_PART = {"a2": "yes", "a3": "no", "n2": "yes"}
NATURAL = {"and-1": "yes", "or-1": "no", "not-1": "yes"}
OPERATOR = {"and-1": "yes", "or-1": "yes", "not-1": ""}


def filled_sheet(tmp_path, sheet: pd.DataFrame, **changes) -> str:
    """The sheet as an annotator returns it: rows in another order, the passage column gone,
    a notes column added, question-level columns on each question's first row only."""
    filled = sheet.drop(columns=["passage"]).assign(reason="because")
    filled["answers"] = filled["pid"].map(ANSWERS)
    filled["meets_part"] = filled["pid"].map(MEETS_PART).fillna("")
    first = ~filled["qid"].duplicated()
    filled["natural"] = filled["qid"].map(NATURAL).where(first, "")
    filled["operator_expressed"] = filled["qid"].map(OPERATOR).where(first, "")
    for column, value in changes.items():
        filled[column] = value
    path = tmp_path / "judged.csv"
    filled.iloc[::-1].to_csv(path, index=False)
    return path


def test_the_figures_on_a_hand_checked_case(tmp_path):
    sheet, key = audit_sheet(LABELLED, runs(), {}, seed=1)
    pairs = judged_pairs(sheet, key, read_judgements(filled_sheet(tmp_path, sheet), key))
    table = confusion(pairs, LABELLED[["qid", "type"]]).set_index("type")
    assert table.columns.tolist() == CONFUSION_COLUMNS[1:]
    everything = table.loc["ALL"].to_dict()
    # 8 group pairs: pos/pos a1 o1 n1, pos/neg a3, neg/pos o2, neg/neg a2 o3 n2
    assert [everything[c] for c in ("pos_pos", "pos_neg", "neg_pos", "neg_neg")] == [
        3 / 8, 1 / 8, 1 / 8, 3 / 8
    ]  # fmt: skip
    expected = {
        "questions": 3,
        "group_labels_right": (6 / 8, 8),
        "positive_labels_right": (3 / 4, 4),
        "negative_labels_right": (3 / 4, 4),
        "pooled_labels_right": (2 / 4, 4),  # a4 and n3 right, a5 and n4 wrong
        "pooled_positives_right": (2 / 3, 3),
        "pooled_negatives_right": (0.0, 1),
        "natural": (2 / 3, 3),
        "operator_expressed": (1.0, 2),  # not-1 not judged
        "and_negatives_one_condition": (1 / 2, 2),
        "not_negatives_excluded_member": (1.0, 1),
        "unjudged_answering": (2 / 7, 7),  # x1 and z1 of 7 (y2 not judged)
        "outside_group_answering": (5 / 11, 11),
        "questions_worth_keeping": (0.0, 2),  # and-1 has a wrong label, or-1 is not natural
    }
    assert everything.pop("questions") == expected.pop("questions")
    for name, value in expected.items():
        assert (everything[name], everything[f"n_{name}"]) == pytest.approx(value), name
    assert table.loc["AND", "group_labels_right"] == 2 / 3
    assert table.loc["OR", "negative_labels_right"] == 1.0
    assert table.loc["NOT", "n_group_labels_right"] == 2
    assert math.isnan(table.loc["OR", "and_negatives_one_condition"])
    assert table.loc["OR", "n_and_negatives_one_condition"] == 0
    models = by_model(pairs).set_index(["model", "type"])
    # m1's top: x1 x2 y1 z1 z2 outside the group labels (x1 z1 answer); m2's adds pooled n3
    assert models.loc[("m1", "ALL")].tolist() == [9, 2 / 5, 5, 2 / 5, 5]
    assert models.loc[("m2", "ALL")].tolist() == [8, 3 / 6, 6, 2 / 5, 5]
    assert models.loc[("m2", "NOT")].tolist() == [3, 2 / 3, 3, 1 / 2, 2]


def test_the_confusion_step_writes_the_page_beside_the_papers_numbers(tmp_path):
    sheet, key = audit_sheet(LABELLED, runs(), {}, seed=1)
    sheet.to_csv(tmp_path / "sheet.csv", index=False)
    key.to_csv(tmp_path / "key.csv", index=False)
    judged = filled_sheet(tmp_path, sheet)
    confusion_step(
        tmp_path / "sheet.csv", tmp_path / "key.csv", judged, "the test", 3,
        tmp_path / "c.csv", tmp_path / "m.csv", tmp_path / "c.html",
    )  # fmt: skip
    table = pd.read_csv(tmp_path / "c.csv").set_index("type")
    assert table.loc["ALL", "group_labels_right"] == 0.75
    assert pd.read_csv(tmp_path / "m.csv")["model"].unique().tolist() == ["m1", "m2"]
    page = (tmp_path / "c.html").read_text()
    assert "75.0% of 8" in page and "87.5%" in page  # ours and the paper's
    assert "37.5%" in page and "62.5%" in page  # the matrices side by side
    assert "unjudged top-3 passages that answer" in page and "28.6% of 7" in page


def test_judgements_in_the_old_layout_are_read(tmp_path):
    """A sheet filled before the audit had its new columns: `judgement`, a label column."""
    sheet, key = audit_sheet(LABELLED, runs(), {}, seed=1)
    path = filled_sheet(tmp_path, sheet)
    old = pd.read_csv(path, dtype=str, keep_default_na=False)
    old = old.rename(columns={"answers": "judgement"}).drop(columns=["meets_part", "natural"])
    old.assign(label="positive").to_csv(path, index=False)
    read = read_judgements(path, key).set_index("pid")
    assert read.loc["a3", "answers"] is True and read.loc["y2", "answers"] is None
    assert read["natural"].isna().all()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"pid": "zzz"}, r"judged.csv, row 2: \(not-1, zzz\) is not on this run's audit sheet "
                         r"\(20 of 20 rows are not\): judge this run's audit/sheet.csv"),
        ({"answers": "maybe"}, r"judged.csv, row 2: answers is 'maybe'; write yes or no"),
        ({"meets_part": "sort of"}, r"judged.csv, row 2: meets_part is 'sort of'"),
        ({"natural": "yes"}, None),  # the same value on every row of a question is fine
        ({"operator_expressed": "no"}, None),
    ],
)  # fmt: skip
def test_bad_judgements_name_the_file_and_row(tmp_path, change, message):
    sheet, key = audit_sheet(LABELLED, runs(), {}, seed=1)
    path = filled_sheet(tmp_path, sheet, **change)
    if message is None:
        assert len(read_judgements(path, key)) == len(key)
    else:
        with pytest.raises(InputError, match=message):
            read_judgements(path, key)


def test_a_question_judged_two_ways_or_a_pair_judged_twice_is_refused(tmp_path):
    sheet, key = audit_sheet(LABELLED, runs(), {}, seed=1)
    path = filled_sheet(tmp_path, sheet)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    both = frame.assign(natural=frame["qid"].map(NATURAL))
    both.loc[both["pid"] == "x3", "natural"] = "no"
    both.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"natural of and-1 is (no|yes) here and (yes|no) on row"):
        read_judgements(path, key)
    pd.concat([frame, frame.tail(1)]).to_csv(path, index=False)
    with pytest.raises(InputError, match=r"row 22: \(and-1, \w+\) is judged twice"):
        read_judgements(path, key)
    frame.drop(columns=["answers"]).to_csv(path, index=False)
    with pytest.raises(InputError, match="no column 'answers'"):
        read_judgements(path, key)


AUDIT_STEPS = {"answers": "judge", "part": "audit_part", "natural": "audit_natural",
               "operator": "audit_operator"}  # fmt: skip


def scripted_client(server, cache_dir) -> LLMClient:
    settings = LLMSettings(backend="openai", model="scripted", cache_dir=str(cache_dir), seed=13)
    return LLMClient(settings, server.base_url, "scripted", "scripted")


def test_an_llm_judge_fills_every_column(tmp_path):
    questions = pd.DataFrame(
        [("and-1", "AND", "What is Alpha and Beta?", ["p1"], ["p2"]),
         ("or-1", "OR", "What is Beta or what is Gamma?", ["p2", "p3"], []),
         # a NOT question names only what it excludes (resources/prompts.yaml templates.not)
         ("not-1", "NOT", "What are some records that are not Gamma?", ["p1"], ["p3"])],
        columns=["qid", "type", "question", "positives", "negatives"],
    )  # fmt: skip
    passages = {"p1": "Alpha is a thing.", "p2": "Beta is a thing.", "p3": "Gamma is a thing."}
    top = {"m": pd.DataFrame([("and-1", "p3", 1)], columns=["qid", "pid", "rank"])}
    sheet, _ = audit_sheet(questions, top, passages, seed=1)
    prompts = {column: prompt(step) for column, step in AUDIT_STEPS.items()}
    with FakeOpenAIServer(responder=respond) as server:
        llm = scripted_client(server, tmp_path)
        filled = judge_sheet(sheet, llm, prompts, AnswererSettings(seed=1))
        calls = sum(server.requests.values())
    got = {(r.qid, r.pid): (r.answers, r.meets_part, r.natural, r.operator_expressed)
           for r in filled.itertuples()}  # fmt: skip
    assert got == {
        # AND: the keyword in the question answers; meets part: not in the question
        ("and-1", "p1"): ("yes", "no", "yes", "yes"),
        ("and-1", "p2"): ("yes", "no", "yes", "yes"),
        ("and-1", "p3"): ("no", "yes", "yes", "yes"),
        # OR: no meets_part; "or what" glues two questions
        ("or-1", "p2"): ("yes", "", "no", "yes"),
        ("or-1", "p3"): ("yes", "", "no", "yes"),
        # NOT: the question names Gamma only, the excluded member (meets part); the scripted
        # judge answers neither (Alpha is not named, Gamma follows "not")
        ("not-1", "p1"): ("no", "no", "yes", "yes"),
        ("not-1", "p3"): ("no", "yes", "yes", "yes"),
    }
    assert calls == 7 + 5 + 2 * 3  # answers, meets_part (AND, NOT), natural and operator
    assert scripted_llm.natural("What is Beta or what is Gamma?") is False


def test_rankings_put_not_questions_with_a_leading_negative_first(tmp_path):
    questions = pd.DataFrame(
        [("and-1", "AND", "And?", ["a"], ["b"]),
         ("not-1", "NOT", "Not one?", ["c"], ["d"]),
         ("not-2", "NOT", "Not two?", ["e"], ["f"])],
        columns=["qid", "type", "question", "positives", "negatives"],
    )  # fmt: skip
    questions.to_parquet(tmp_path / "q.parquet")
    corpus = {"pid": list("abcdefz"), "title": list("ABCDEFZ")}
    corpus["text"] = [f"text {c}" for c in "abcdefz"]
    pd.DataFrame(corpus).to_parquet(tmp_path / "c.parquet")
    run = pd.DataFrame(
        [("and-1", "b", 1), ("and-1", "a", 2),  # a negative above the positive (AND)
         ("not-1", "c", 1), ("not-1", "d", 2),  # positive first
         ("not-2", "f", 1), ("not-2", "z", 2), ("not-2", "e", 3)],  # the excluded one first
        columns=["qid", "pid", "rank"],
    )  # fmt: skip
    run["score"] = 1.0 / run["rank"]
    run.to_parquet(tmp_path / "m.parquet")
    runs = {"m": {q: part for q, part in run.groupby("qid")}}
    rows = ranking_rows(questions, runs, 10).set_index("qid")["inversions"].to_dict()
    assert rows == {"and-1": 1, "not-1": 0, "not-2": 1}
    write_rankings(
        tmp_path / "q.parquet", tmp_path / "c.parquet", {"m": tmp_path / "m.parquet"},
        top=10, max_questions=10, html_out=tmp_path / "r.html",
    )  # fmt: skip
    html = (tmp_path / "r.html").read_text()
    order = [html.index(qid) for qid in ("not-2", "and-1", "not-1")]
    assert order == sorted(order)  # the inverted NOT question first, then AND, then NOT
    assert "1 of 2 NOT questions" in html
    assert "<b>- F</b>" in html and "<b>+ E</b>" in html


def test_rankings_of_no_question_is_a_page_that_says_so(tmp_path):
    """No question (so runs without a hit): a page with its counts, not an Arrow error from
    filtering the corpus on an empty list of passages."""
    columns = ["qid", "type", "question", "positives", "negatives"]
    questions = pd.DataFrame({c: pd.Series([], dtype=object) for c in columns})
    questions.to_parquet(tmp_path / "q.parquet")
    corpus = pd.DataFrame({"pid": ["a"], "title": ["A"], "text": ["text a"]})
    corpus.to_parquet(tmp_path / "c.parquet")
    run = pd.DataFrame({"qid": [], "pid": [], "rank": [], "score": []}).astype(
        {"qid": str, "pid": str, "rank": "int64", "score": float}
    )
    run.to_parquet(tmp_path / "m.parquet")
    write_rankings(
        tmp_path / "q.parquet", tmp_path / "c.parquet", {"m": tmp_path / "m.parquet"},
        top=10, max_questions=10, html_out=tmp_path / "r.html",
    )  # fmt: skip
    assert "top 10 for 0 of 0 questions" in (tmp_path / "r.html").read_text()
