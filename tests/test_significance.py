"""Paired randomisation test, Holm correction and Table 2's daggers, against known p-values and
scipy's independent permutation test."""

import numpy as np
import pandas as pd
import pytest
from scipy.stats import permutation_test

from boolbench.report.significance import beats_row_above, holm, pairwise_tests, randomisation_test
from boolbench.retrieval.evaluation import aggregate, write_tables


def scipy_p(a, b, resamples):
    result = permutation_test(
        (np.asarray(a), np.asarray(b)),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=resamples,
        rng=np.random.default_rng(1),
    )
    return result.pvalue


def test_identical_runs_give_p_one():
    scores = np.random.default_rng(0).random(50)
    assert randomisation_test(scores, scores, 1000, seed=3) == 1.0


def test_a_run_better_on_every_question_gives_the_exact_small_p():
    better = np.linspace(0.5, 1.0, 10)
    # Only the identity and the all-flipped sign vectors reach |mean| >= 0.1: 2 of 2^10.
    assert randomisation_test(better, better - 0.1, 10_000, seed=0) == 2 / 1024
    # Sampled (2^30 flips > resamples): the smallest p a sampled test can give, 1/(R+1).
    many = np.linspace(0.5, 1.0, 30)
    assert randomisation_test(many, many - 0.1, 2000, seed=0) == pytest.approx(1 / 2001)


@pytest.mark.parametrize("n", [5, 9, 12])
def test_exact_p_values_equal_scipys(n):
    rng = np.random.default_rng(n)
    a, b = rng.random(n), rng.random(n)
    assert randomisation_test(a, b, 10_000, seed=0) == pytest.approx(scipy_p(a, b, 10_000))


def test_sampled_p_values_agree_with_scipys():
    rng = np.random.default_rng(7)
    a = rng.random(60)
    b = a - 0.05 + rng.normal(0, 0.3, 60)
    ours = randomisation_test(a, b, 20_000, seed=0)
    assert 0.001 < ours < 0.5  # a case where Monte Carlo error matters
    assert ours == pytest.approx(scipy_p(a, b, 20_000), abs=0.01)
    assert randomisation_test(a, b, 20_000, seed=0) == ours  # seeded: same p every run


def test_holm_against_hand_computed_values():
    # sorted: 0.01*4=0.04, 0.02*3=0.06, 0.03*2=0.06 (monotone), 0.5*1=0.5
    assert holm([0.03, 0.01, 0.5, 0.02]).tolist() == pytest.approx([0.06, 0.04, 0.5, 0.06])
    assert holm([0.4, 0.9]).tolist() == pytest.approx([0.8, 0.9])
    adjusted = holm([0.2, np.nan])
    assert adjusted[0] == pytest.approx(0.2) and np.isnan(adjusted[1])


def scores_frame(per_model: dict[str, list[float]], kind="AND") -> pd.DataFrame:
    """Scores under the completed labels as given, and under the group labels reversed (1 -
    value): the tests and daggers must read the completed ones."""
    rows = []
    for model, values in per_model.items():
        for i, value in enumerate(values):
            for labels, mrr in (("completed", value), ("group", 1 - value)):
                rows.append(
                    {
                        "model": model,
                        "query_set": "boolquestions",
                        "labels": labels,
                        "qid": f"q{i:02d}",
                        "type": kind,
                        "split": "test",
                        "MRR@10": mrr,
                        "NegRecall@10": 0.0,
                        "Recall@100": 1.0,
                        "nDCG@10": mrr,
                        "Judged@10": 1.0,
                    }
                )
    return pd.DataFrame(rows)


def questions_of(scores: pd.DataFrame) -> pd.DataFrame:
    """The dataset rows of the questions in `scores` (one positive each, no negative)."""
    frame = scores[["qid", "type", "split"]].drop_duplicates().reset_index(drop=True)
    return frame.assign(positives=[["p"]] * len(frame), negatives=[[]] * len(frame))


def test_pairs_are_matched_by_question_and_corrected_per_column():
    base = list(np.linspace(0.1, 0.6, 12))
    scores = scores_frame({"weak": base, "strong": [v + 0.3 for v in base], "same": base}).sample(
        frac=1, random_state=0
    )  # order must not matter: pairs join on qid
    columns = [("boolquestions", "AND", "test"), ("boolquestions", "ALL", "all")]
    tests = pairwise_tests(scores, columns, ["weak", "strong", "same"], resamples=10_000)
    assert len(tests) == 6 and set(tests["labels"]) == {"completed"}
    column = tests[tests["type"] == "AND"].set_index(["model_a", "model_b"])
    exact = 2 / 2**12
    assert column.loc[("weak", "strong"), "p_value"] == pytest.approx(exact)
    assert column.loc[("weak", "same"), "p_value"] == 1.0
    # Holm over the 3 pairs: the two equal smallest p-values get 3p and 2p -> both 3p.
    assert column.loc[("weak", "strong"), "p_holm"] == pytest.approx(3 * exact)
    assert column.loc[("strong", "same"), "p_holm"] == pytest.approx(3 * exact)
    assert column.loc[("weak", "same"), "p_holm"] == 1.0
    assert column.loc[("weak", "strong"), "mean_b"] == pytest.approx(np.mean(base) + 0.3)

    marks = beats_row_above(tests, ["weak", "strong", "same"], "boolquestions", "AND", "test", 0.05)
    assert marks == [False, True, False]  # "same" is significantly *worse* than the row above


def test_table2_marks_the_model_that_beats_the_row_above(tmp_path):
    base = list(np.linspace(0.1, 0.6, 12))
    scores = scores_frame({"weak": base, "strong": [v + 0.3 for v in base]})
    tests = pairwise_tests(scores, [("boolquestions", "AND", "all")], ["weak", "strong"])
    out = {ext: tmp_path / f"table2.{ext}" for ext in ("csv", "md", "tex", "html")}
    write_tables(
        aggregate(scores), ["weak", "strong"], "all", tests, 0.05, questions_of(scores), out
    )
    md = out["md"].read_text().splitlines()
    # Only the completed AND column was tested: ALL and the group labels have no dagger.
    assert md[3].startswith(
        "| strong | - | 35.00 | 35.00 | - | - | **65.00** | **65.00\N{DAGGER}** | - | - |"
    )
    assert md[2].startswith("| weak | - | **65.00** | **65.00** | - | - | 35.00 | 35.00 | - |")
    assert "\N{DAGGER}" not in md[2]
    assert r"65.00$^\dagger$" in out["tex"].read_text()
    assert "65.00&dagger;" in out["html"].read_text()
    assert "Holm-Bonferroni" in out["md"].read_text()


def test_a_column_without_queries_gives_no_p_value_and_no_dagger():
    scores = scores_frame({"a": [0.1, 0.2], "b": [0.5, 0.6]})
    tests = pairwise_tests(scores, [("original", "ALL", "all")], ["a", "b"])
    assert tests["n_queries"].tolist() == [0]
    assert tests["p_value"].isna().all() and tests["p_holm"].isna().all()
    assert beats_row_above(tests, ["a", "b"], "original", "ALL", "all", 0.05) == [False, False]


def test_table2_of_a_split_without_questions_is_empty_and_says_why(tmp_path):
    """No question in the table's split (or none scored at all): every question column is
    empty and the counts line says why, instead of failing on the first model's counts."""
    scores = scores_frame({"a": [0.1, 0.2], "b": [0.5, 0.6]})  # test questions only
    tests = pairwise_tests(scores, [("boolquestions", "ALL", "train")], ["a", "b"])
    out = {ext: tmp_path / f"table2.{ext}" for ext in ("csv", "md", "tex", "html")}
    write_tables(aggregate(scores), ["a", "b"], "train", tests, 0.05, questions_of(scores), out)
    table = pd.read_csv(out["csv"])
    assert table["model"].tolist() == ["a", "b"] and table.iloc[:, 1:].isna().all().all()
    assert (
        "Questions (train split): original queries 0, ALL 0 (0 with negatives), AND 0 (0 with "
        "negatives), OR 0 (0 with negatives), NOT 0 (0 with negatives). No question is in the "
        "train split (evaluation.table_split), so the question columns are empty."
    ) in out["md"].read_text()
    nothing = aggregate(scores.iloc[:0])
    assert nothing.empty
    write_tables(nothing, ["a", "b"], "all", tests.iloc[:0], 0.05, questions_of(scores)[:0], out)
    assert "No question was scored, so the question columns are empty." in out["md"].read_text()
