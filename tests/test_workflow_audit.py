"""The label audit on the real workflow: the blind sheet and its key from the scripted questions
and two models' runs, set against a filled sheet (audit.judgements) and against the scripted
LLM (audit.judge) through the fake server."""

import json

import pandas as pd
import pytest

from boolbench.generation.audit import PART_RUBRIC, SHEET_COLUMNS
from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.paths import artifact
from tests.conftest import Workflow
from tests.scripted_llm import answers, meets_part, natural, respond, scripted_config

pytestmark = pytest.mark.workflow  # runs the real Snakefile

# Two retrievers with different top passages (cheap: no encoder).
MODELS = {"bm25": {"kind": "bm25"}, "bm25-flat": {"kind": "bm25", "k1": 0.3, "b": 0.1}}
DEPTH = 5
BASE = "results/tiny/audit"


def read(flow, path: str) -> pd.DataFrame:
    return pd.read_csv(flow.path(path), dtype=str, keep_default_na=False)


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    with FakeOpenAIServer(responder=respond) as server:
        flow = Workflow(tmp_path_factory.mktemp("audit"))

        def config(**audit):
            return scripted_config(
                server,
                candidates={"n_groups": 3},
                models=MODELS,
                # pooled to 2, audited to 5: the sheet holds group, pooled and unjudged passages
                pooling={"depth": 2},
                audit={"questions": 6, "depth": DEPTH, **audit},
            )

        flow.write_config(config())
        flow.run(f"{BASE}/sheet.csv")
        yield flow, config


def test_the_sheet_is_blind_and_the_key_holds_every_label_and_top_passage(audited):
    flow, _ = audited
    sheet, key = read(flow, f"{BASE}/sheet.csv"), read(flow, f"{BASE}/key.csv")
    assert sheet.columns.tolist() == SHEET_COLUMNS
    assert sheet[["qid", "pid"]].equals(key[["qid", "pid"]]) and not key.duplicated().any()
    kept = pd.read_parquet(flow.path(artifact("dataset", corpus="tiny"))).set_index("qid")
    qids = list(dict.fromkeys(sheet["qid"]))
    assert 0 < len(qids) <= 6 and set(qids) <= set(kept.index)
    labelled = key[key["label"] != "unjudged"]
    for qid in qids:
        mine = labelled[labelled["qid"] == qid]
        assert sorted(mine.loc[mine["label"] == "positive", "pid"]) == sorted(
            kept.loc[qid, "positives"]
        )
        assert sorted(mine.loc[mine["label"] == "negative", "pid"]) == sorted(
            kept.loc[qid, "negatives"]
        )
    # every passage of each model's top DEPTH for a sampled question is on the sheet
    on_sheet = set(zip(key["qid"], key["pid"], strict=True))
    for model in MODELS:
        run = pd.read_parquet(flow.path(f"results/tiny/runs/{model}.parquet"))
        top = run[run["qid"].isin(qids) & (run["rank"] <= DEPTH)]
        assert len(top) > 0 and set(zip(top["qid"], top["pid"], strict=True)) <= on_sheet
        for r in top.itertuples():
            ranked = key.loc[(key["qid"] == r.qid) & (key["pid"] == r.pid), "ranked_by"]
            assert f"{model}@{r.rank}" in ranked.iloc[0].split()
    assert (key.loc[key["label"] == "unjudged", "ranked_by"] != "").all()
    page = flow.path(f"{BASE}/sheet.html").read_text()
    assert "unjudged" not in page and "<details>" not in page


def known_judgements(sheet: pd.DataFrame, key: pd.DataFrame) -> pd.DataFrame:
    """Every group label right but the first positive; of each question's unjudged passages the
    first answers; every AND and NOT negative meets part; AND questions alone natural."""
    filled = sheet.drop(columns=["passage"]).assign(note="x")
    label = key["label"]
    filled["answers"] = label.map({"positive": "yes", "negative": "no"}).fillna("no")
    filled.loc[(label == "positive").idxmax(), "answers"] = "no"
    first_unjudged = key[label == "unjudged"].drop_duplicates("qid").index
    filled.loc[first_unjudged, "answers"] = "yes"
    part = filled["type"].isin(list(PART_RUBRIC)) & (label == "negative")
    filled["meets_part"] = part.map({True: "yes", False: ""})
    filled["natural"] = filled["type"].eq("AND").map({True: "yes", False: "no"})
    filled["operator_expressed"] = "yes"
    return filled


def test_a_filled_sheet_gives_the_figures_it_implies(audited, tmp_path):
    flow, config = audited
    sheet, key = read(flow, f"{BASE}/sheet.csv"), read(flow, f"{BASE}/key.csv")
    path = tmp_path / "judged.csv"
    known_judgements(sheet, key).sample(frac=1, random_state=1).to_csv(path, index=False)
    flow.write_config(config(judgements=str(path)))
    try:
        assert "audit_judge" not in flow.planned_jobs(f"{BASE}/confusion.csv")
        flow.run(f"{BASE}/confusion.csv")
    finally:
        flow.write_config(config())
    table = pd.read_csv(flow.path(f"{BASE}/confusion.csv")).set_index("type").loc["ALL"]
    group = key["label"].isin(["positive", "negative"]).sum()
    unjudged = key[key["label"] == "unjudged"]
    assert len(unjudged) and key["label"].str.startswith("pooled_").any()
    questions = sheet.drop_duplicates("qid")
    and_negatives = ((sheet["type"] == "AND") & (key["label"] == "negative")).sum()
    assert table["questions"] == len(questions)
    assert (table["group_labels_right"], table["n_group_labels_right"]) == pytest.approx(
        ((group - 1) / group, group),
        abs=1e-4,  # written with 4 decimals
    )
    assert table["positive_labels_right"] < 1 and table["negative_labels_right"] == 1
    assert (table["unjudged_answering"], table["n_unjudged_answering"]) == pytest.approx(
        (unjudged["qid"].nunique() / len(unjudged), len(unjudged)), abs=1e-4
    )
    assert table["natural"] == pytest.approx((questions["type"] == "AND").mean(), abs=1e-4)
    assert table["operator_expressed"] == 1 and table["n_operator_expressed"] == len(questions)
    assert table["n_and_negatives_one_condition"] == and_negatives
    if and_negatives:
        assert table["and_negatives_one_condition"] == 1
    models = read(flow, f"{BASE}/by_model.csv")
    assert models["model"].unique().tolist() == list(MODELS)
    page = flow.path(f"{BASE}/confusion.html").read_text()
    assert f"the filled sheet {path}" in page and "87.5%" in page


def test_a_sheet_of_another_run_is_one_clear_error(audited, tmp_path):
    flow, config = audited
    sheet, key = read(flow, f"{BASE}/sheet.csv"), read(flow, f"{BASE}/key.csv")
    foreign = known_judgements(sheet, key)
    foreign.loc[0, "pid"] = "Not_a_passage_of_this_sheet"
    path = tmp_path / "foreign.csv"
    foreign.to_csv(path, index=False)
    flow.write_config(config(judgements=str(path)))
    try:
        result = flow.run(f"{BASE}/confusion.csv", check=False)
    finally:
        flow.write_config(config())
    assert result.returncode != 0
    line = f"{path}, row 2: ({foreign.loc[0, 'qid']}, Not_a_passage_of_this_sheet) is not on"
    assert line in result.stderr
    log = flow.path("logs/tiny/audit_confusion.log").read_text()
    assert line in log and "Traceback" not in log and len(log.strip().splitlines()) == 1


def test_the_llm_judge_fills_every_column_cached_and_accounted(audited):
    flow, config = audited
    flow.write_config(config(judge={}))
    try:
        flow.run(f"{BASE}/confusion.csv")
        first = json.loads(flow.path(artifact("audit_accounting", corpus="tiny")).read_text())
        flow.run(f"{BASE}/confusion.csv", "--forcerun", "audit_judge")
    finally:
        flow.write_config(config())
    sheet = read(flow, f"{BASE}/sheet.csv")
    filled = read(flow, f"{BASE}/llm_judgements.csv")
    assert filled[["qid", "pid", "passage"]].equals(sheet[["qid", "pid", "passage"]])
    for row in filled.itertuples():
        assert row.answers == ("yes" if answers(row.question, row.passage) else "no")
        if row.type in PART_RUBRIC:
            said = meets_part(row.question, PART_RUBRIC[row.type], row.passage)
            assert row.meets_part == ("yes" if said else "no")
        else:
            assert row.meets_part == ""
        assert row.natural == ("yes" if natural(row.question) else "no")
        assert row.operator_expressed in ("yes", "no")
    calls = len(sheet) + sheet["type"].isin(list(PART_RUBRIC)).sum() + 2 * sheet["qid"].nunique()
    # (the answers of labelled pairs the filter asked in the same words come from the cache)
    assert first["requests"] == calls and 0 < first["api_calls"] <= calls
    assert first["api_calls"] + first["cache_hits"] == calls
    again = json.loads(flow.path(artifact("audit_accounting", corpus="tiny")).read_text())
    assert again["requests"] == calls and again["api_calls"] == 0  # a rerun pays nothing
    table = pd.read_csv(flow.path(f"{BASE}/confusion.csv")).set_index("type")
    assert table.loc["ALL", "n_natural"] == sheet["qid"].nunique()
    assert "the LLM scripted (audit.judge)" in flow.path(f"{BASE}/confusion.html").read_text()
