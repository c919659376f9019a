"""docs/config.md is generated from config.schema.yaml and must not drift from it."""

from boolbench.config import schema
from boolbench.config_reference import REFERENCE, render, rows


def test_the_config_reference_is_the_schema_rendered():
    assert REFERENCE.read_text(encoding="utf-8") == render(schema()), (
        "docs/config.md differs from config.schema.yaml: run python -m boolbench.config_reference"
    )


def test_every_key_says_what_it_does():
    undocumented = [key for key, _, _, text in rows(schema(), schema(), "") if not text]
    assert not undocumented, f"keys without a description in config.schema.yaml: {undocumented}"


def test_nested_keys_and_registry_entries_are_listed():
    keys = {key for key, *_ in rows(schema(), schema(), "")}
    assert {"filter.threshold", "llm.steps", "models.<name>.kind", "corpora.<name>.questions",
            "audit.judge", "models.<name>.index.nprobe"} <= keys  # fmt: skip
