"""The label audit (sheet, judgements, confusion matrix) and the per-question rankings page."""

import pandas as pd
import pytest

from boolbench.errors import InputError
from boolbench.generation.audit import (
    audit_sheet,
    confusion,
    judge_sheet,
    read_judgements,
    sample_questions,
    write_confusion,
    write_sheet,
)
from boolbench.generation.filtering import AnswererSettings
from boolbench.generation.prompts import Prompt
from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.report.pages import ranking_rows, write_rankings
from tests.scripted_llm import prompt, respond
from tests.test_generation import scripted_client


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


def test_sheet_rows_are_pairs_with_blank_judgements_and_hidden_labels(tmp_path):
    questions = kept({"AND": 2, "OR": 2, "NOT": 2})
    passages = {p: f"text of {p}" for ps in questions["positives"] for p in ps}
    passages |= {p: f"text of {p}" for ps in questions["negatives"] for p in ps}
    sheet = audit_sheet(questions, passages, 3, seed=1)
    assert sheet["qid"].nunique() == 3 and len(sheet) == 9  # 1 positive + 2 negatives each
    first = sheet[sheet["qid"] == sheet["qid"].iloc[0]]
    assert first["label"].tolist() == ["positive", "negative", "negative"]
    assert (sheet["judgement"] == "").all() and sheet["passage"].str.startswith("text of").all()
    write_sheet(sheet, tmp_path / "sheet.csv", tmp_path / "sheet.html", seed=1)
    html = (tmp_path / "sheet.html").read_text()
    assert html.count("<details><summary>label</summary>") == 9  # shown only when opened
    assert pd.read_csv(tmp_path / "sheet.csv").columns.tolist() == list(sheet.columns)


def judged_sheet() -> pd.DataFrame:
    """Hand-made judgements: AND 3 pairs (all right), NOT 3 pairs (one positive label wrong),
    OR 2 pairs (one negative label wrong), one pair left blank."""
    rows = [
        ("and-1", "AND", "a", "positive", "yes", "yes"),
        ("and-1", "AND", "b", "negative", "no", ""),
        ("and-1", "AND", "c", "negative", "No", ""),
        ("not-1", "NOT", "d", "positive", "yes", "yes"),
        ("not-1", "NOT", "e", "positive", "no", ""),
        ("not-1", "NOT", "f", "negative", "no", ""),
        ("or-1", "OR", "g", "positive", "y", "no"),
        ("or-1", "OR", "h", "negative", "YES", ""),
        ("or-1", "OR", "i", "negative", "", ""),
    ]
    return pd.DataFrame(
        rows, columns=["qid", "type", "pid", "label", "judgement", "operator_expressed"]
    )


def test_confusion_matrix_on_a_hand_checked_case(tmp_path):
    path = tmp_path / "judged.csv"
    judged_sheet().to_csv(path, index=False)
    table = confusion(read_judgements(path)).set_index("type")
    everything = table.loc["ALL"]
    # 8 judged pairs: pos/pos a d g, pos/neg h, neg/pos e, neg/neg b c f
    assert everything["pairs"] == 8
    assert everything[["pos_pos", "pos_neg", "neg_pos", "neg_neg"]].tolist() == [
        3 / 8, 1 / 8, 1 / 8, 3 / 8
    ]  # fmt: skip
    assert everything["label_accuracy"] == 6 / 8
    assert table.loc["AND", "label_accuracy"] == 1.0
    assert table.loc["NOT", "label_accuracy"] == 2 / 3
    assert table.loc["OR", "positive_labels_right"] == 1.0
    assert table.loc["OR", "negative_labels_right"] == 0.0
    # operator: AND yes, NOT yes, OR no; worth keeping: AND only (NOT and OR have a wrong label)
    assert everything["operator_expressed"] == 2 / 3
    assert everything["questions_worth_keeping"] == 1 / 3
    write_confusion(table.reset_index(), "test", tmp_path / "c.csv", tmp_path / "c.html")
    html = (tmp_path / "c.html").read_text()
    assert "62.5%" in html and "37.5%" in html  # the paper's and ours side by side


def test_judgements_without_labels_take_them_from_the_run_sheet(tmp_path):
    sheet = judged_sheet()
    path = tmp_path / "judged.csv"
    sheet.drop(columns=["label", "type"]).to_csv(path, index=False)
    again = read_judgements(path, sheet)
    assert again["label"].tolist() == sheet["label"].tolist()
    foreign = sheet.drop(columns=["label", "type"]).assign(pid="zzz")
    foreign.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"row 2: \(and-1, zzz\) is not in this run's audit"):
        read_judgements(path, sheet)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"judgement": "maybe"}, r"judged.csv, row 3: judgement is 'maybe'; write yes or no"),
        ({"label": "unsure"}, r"judged.csv, row 3: label is 'unsure'"),
    ],
)
def test_bad_judgements_name_the_file_and_row(tmp_path, change, message):
    sheet = judged_sheet()
    for column, value in change.items():
        sheet.loc[1, column] = value
    path = tmp_path / "judged.csv"
    sheet.to_csv(path, index=False)
    with pytest.raises(InputError, match=message):
        read_judgements(path)


def test_a_judgements_file_without_a_judgement_column_is_refused(tmp_path):
    path = tmp_path / "judged.csv"
    judged_sheet().drop(columns=["judgement"]).to_csv(path, index=False)
    with pytest.raises(InputError, match="no column 'judgement'"):
        read_judgements(path)


def test_an_llm_judge_fills_the_sheet(tmp_path):
    def judge(body):
        user = body["messages"][-1]["content"]
        if user.startswith("OPERATOR|"):  # the operator question: AND expressed, others not
            return ("yes", {"yes": 0.8, "no": 0.2}) if "Alpha" in user else ("no", {"no": 1.0})
        return respond(body)

    sheet = pd.DataFrame(
        [("and-1", "AND", "What is Alpha?", "p1", "positive", "Alpha is a thing.", "", ""),
         ("and-1", "AND", "What is Alpha?", "p2", "negative", "Beta is a thing.", "", ""),
         ("or-1", "OR", "What is Beta?", "p2", "positive", "Beta is a thing.", "", "")],
        columns=["qid", "type", "question", "pid", "label", "passage", "judgement",
                 "operator_expressed"],
    )  # fmt: skip
    with FakeOpenAIServer(responder=judge) as server:
        filled = judge_sheet(
            sheet,
            scripted_client(server, tmp_path),
            prompt("judge"),
            Prompt("O", "OPERATOR|{question}|{rubric}"),
            AnswererSettings(seed=1),
        )
    assert filled["judgement"].tolist() == ["yes", "no", "yes"]
    assert filled["operator_expressed"].tolist() == ["yes", "yes", "no"]
    table = confusion(read_judgements_frame(filled, tmp_path)).set_index("type")
    assert table.loc["ALL", "label_accuracy"] == 1.0


def read_judgements_frame(frame: pd.DataFrame, tmp_path):
    path = tmp_path / "filled.csv"
    frame.to_csv(path, index=False)
    return read_judgements(path)


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
