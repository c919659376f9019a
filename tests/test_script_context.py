"""The glue every workflow script runs in: errors end in one line in the rule's log and on the
console (with the traceback below it for unexpected ones), and corrupt input artifacts are
named with the rule that makes them and the command that regenerates them."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from boolbench.artifacts import RULES_ENV, check_readable, export_rules, producing_rule
from boolbench.errors import InputError
from boolbench.workflow import script_context


def job(tmp_path, *inputs):
    return SimpleNamespace(rule="demo", log=[str(tmp_path / "demo.log")], input=list(inputs))


def test_unexpected_error_has_one_line_and_its_traceback_in_the_log_and_console(tmp_path, capsys):
    def deep():
        raise ValueError("column 'pid'\n  missing")

    with pytest.raises(SystemExit) as exit_info, script_context(job(tmp_path)):
        deep()
    assert exit_info.value.code == 1
    log = (tmp_path / "demo.log").read_text()
    first, *rest = log.splitlines()
    assert first == (
        "boolbench: rule demo failed with an unexpected error: ValueError: column 'pid' "
        "missing (traceback below)"
    )
    assert rest[0] == "Traceback (most recent call last):"
    assert "in deep" in log and rest[-1] == "  missing"
    assert capsys.readouterr().err.strip() == log.strip()


def test_bad_input_is_one_line_without_traceback(tmp_path, capsys):
    with pytest.raises(SystemExit), script_context(job(tmp_path)):
        raise InputError("corpus.jsonl, line 3: duplicate passage id 'a'")
    expected = "boolbench: rule demo failed: corpus.jsonl, line 3: duplicate passage id 'a'\n"
    assert (tmp_path / "demo.log").read_text() == expected
    assert capsys.readouterr().err == expected


def test_corrupt_inputs_are_named_before_the_job_runs(tmp_path, monkeypatch):
    monkeypatch.setenv(RULES_ENV, "")  # restored after the test
    export_rules(
        [
            ("sample_candidates", ["results/{corpus}/candidates.parquet"], None),
            ("gather_embeddings", ["results/{corpus}/embeddings.npy"], None),
        ]
    )
    results = tmp_path / "results" / "tiny"
    results.mkdir(parents=True)
    table, vectors = results / "candidates.parquet", results / "embeddings.npy"
    pd.DataFrame({"pid": ["a", "b"]}).to_parquet(table)
    np.save(vectors, np.ones((50, 8), dtype=np.float32))
    check_readable([table, vectors, tmp_path])  # intact (and a folder is skipped)

    table.write_bytes(table.read_bytes()[:-20])  # truncated: no footer
    with pytest.raises(InputError) as error:
        check_readable([vectors, table])
    assert str(error.value) == (
        f"{table}: not a readable Parquet file (Parquet magic bytes not found in footer): "
        "the file is corrupt or truncated (made by rule sample_candidates); regenerate it by "
        f"running your snakemake command again with --forcerun {table}"
    )
    vectors.write_bytes(vectors.read_bytes()[:-100])
    with pytest.raises(InputError, match=r"embeddings.npy: a .npy file of 1628 bytes where its "
                       r"header needs 1728: .*made by rule gather_embeddings"):  # fmt: skip
        check_readable([vectors])

    # In a job: the one line, in the log, and the job body never runs.
    ran = []
    with pytest.raises(SystemExit), script_context(job(tmp_path, str(table))):
        ran.append(True)
    assert not ran
    assert "(made by rule sample_candidates)" in (tmp_path / "demo.log").read_text()


def test_producing_rule_prefers_the_most_specific_pattern(monkeypatch):
    patterns = {
        "results/{corpus}/models/{model}/embeddings.npy": "gather_model_embeddings",
        "results/{corpus}/embeddings.npy": "gather_embeddings",
        "results/{corpus}/{anything}.npy": "catch_all",
    }
    monkeypatch.setenv(RULES_ENV, json.dumps(patterns))
    assert producing_rule("results/a/embeddings.npy") == "gather_embeddings"
    assert producing_rule("/scratch/x/results/a/models/m/embeddings.npy") == (
        "gather_model_embeddings"
    )
    assert producing_rule("results/a/other.npy") == "catch_all"
    assert producing_rule("elsewhere/file.npy") is None
