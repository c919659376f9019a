import copy
from pathlib import Path

import pytest
import yaml

from boolbench.config import (
    CorpusBaselines,
    audit_source,
    load_config_file,
    schema,
    validate_config,
)
from boolbench.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def minimal(**corpus):
    return {"corpora": {"c": {"source": "vital_articles", **corpus}}}


def test_defaults_are_filled_and_resolved_per_corpus():
    config = validate_config(minimal())
    corpus = config["corpora"]["c"]
    assert config["seed"] == 13
    assert corpus["grouping"] == "cluster"
    assert corpus["empty_text"] == "error"
    assert corpus["encoder"]["model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert corpus["clustering"]["linkage"] == "ward"
    assert corpus["candidates"]["sizes"] == [2, 3]


def test_corpus_sections_override_only_their_keys():
    config = minimal(clustering={"n_clusters": 10, "sample_size": 100})
    config["clustering"] = {"svd_components": 16}
    config["corpora"]["d"] = {"source": "vital_articles"}
    validate_config(config)
    c, d = config["corpora"]["c"]["clustering"], config["corpora"]["d"]["clustering"]
    assert (c["n_clusters"], c["sample_size"], c["svd_components"]) == (10, 100, 16)
    assert (d["n_clusters"], d["sample_size"], d["svd_components"]) == (400, 4000, 16)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (minimal(source="nope"), "corpora.c.source: 'nope' is not one of"),
        ({"corpora": {"c": {"source": "msmarco"}}}, "corpora.c: 'path' is a required property"),
        (minimal(limit=0), "corpora.c.limit: 0 is less than the minimum of 1"),
        (minimal(clustering={"linkage": "median"}), "corpora.c.clustering.linkage"),
        (minimal(clustering={"bogus": 1}), "corpora.c.clustering: Additional properties"),
        ({**minimal(), "encodr": {}}, "(top level): Additional properties"),
        (minimal(clustering={"distance_threshold": 1.5}), "set exactly one of n_clusters"),
        (minimal(clustering={"linkage": "ward", "metric": "cosine"}), "ward linkage needs"),
        (minimal(clustering={"sample_size": 50, "n_clusters": 60}), "cannot be formed"),
        ({"corpora": {"bad name": {"source": "vital_articles"}}}, "does not match"),
        (
            minimal(grouping="document", candidates={"sizes": [5]}),
            "corpora.c.document_grouping.window: 3 passages per document group cannot give",
        ),
    ],
)
def test_invalid_configs_name_the_key(config, message):
    with pytest.raises(ConfigError) as error:
        validate_config(copy.deepcopy(config), source="my.yaml")
    assert str(error.value).startswith("my.yaml: ")
    assert message in str(error.value)


def test_shipped_config_is_valid():
    config = load_config_file(str(REPO / "config.yaml"))
    assert list(config["corpora"]) == ["wiki"]
    raw = yaml.safe_load((REPO / "config.yaml").read_text())
    assert (
        raw["clustering"]["sample_size"] == config["corpora"]["wiki"]["clustering"]["sample_size"]
    )


# What the shipped config.yaml chooses differently from the schema's defaults, on purpose: the
# demo's size, the encoder precision measured on its CPU and the candidate draw (closest: more
# groups share a kind; the schema keeps the paper's random draw, so that results folders made
# before keep their groups). Any other value it restates must be the schema's default, so that
# the two cannot drift apart.
SHIPPED_CHOICES = {"encoder.precision", "candidates.n_groups", "candidates.sizes",
                   "document_grouping.window",
                   "candidates.draw", "candidates.skip_loosest",
                   "generation.per_group.or"}  # fmt: skip


def _leaves(config: dict, properties: dict, prefix: str = ""):
    """(dotted key, value, schema entry) of every key config.yaml sets, section by section."""
    for key, value in config.items():
        entry = _resolve(properties[key])
        if isinstance(value, dict) and "properties" in entry:
            yield from _leaves(value, entry["properties"], f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value, entry


def _resolve(entry: dict) -> dict:
    if "$ref" in entry:
        return _resolve(schema()["$defs"][entry["$ref"].rsplit("/", 1)[-1]])
    return entry


def test_the_shipped_config_restates_the_schema_defaults_or_names_its_choice():
    shipped = yaml.safe_load((REPO / "config.yaml").read_text())
    shipped.pop("corpora")  # what to run on: no default to agree with
    leaves = list(_leaves(shipped, schema()["properties"]))
    differ = {key for key, value, entry in leaves if entry.get("default", value) != value}
    assert differ == SHIPPED_CHOICES
    assert all("default" in entry for _, _, entry in leaves)


def test_missing_config_file_is_a_clear_error(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config_file(str(tmp_path / "nope.yaml"))


def test_example_config_for_own_corpora_is_valid():
    config = load_config_file(str(REPO / "resources/examples/config.own_corpora.yaml"))
    assert config["corpora"]["nq"]["grouping"] == "document"
    assert config["corpora"]["marco"]["clustering"]["sample_size"] == 20000
    assert config["corpora"]["nq"]["clustering"]["sample_size"] == 4000  # the default


def test_example_config_with_the_papers_models_is_valid():
    config = load_config_file(str(REPO / "resources/examples/config.paper_models.yaml"))
    models = config["models"]
    assert models["e5-base-v2"]["query_prefix"] == ""  # as the official evaluation ran it
    assert models["distilbert-dot-v5"]["similarity"] == "dot"
    assert models["bm25-MiniLM-L6-ce"]["rerank"] == "bm25"


def test_llm_defaults_and_openai_needs_a_model():
    config = validate_config(minimal())
    assert config["llm"]["backend"] == "local" and config["llm"]["local_model"] == "qwen-0.5b"
    with pytest.raises(ConfigError, match="llm.model: backend 'openai' needs the model name"):
        validate_config({**minimal(), "llm": {"backend": "openai"}})
    with pytest.raises(ConfigError, match="llm.api_key_env: must be the name of an") as error:
        validate_config({**minimal(), "llm": {"api_key_env": "sk-123"}})
    assert "sk-123" not in str(error.value)


def test_sentence_transformers_models_follow_the_encoders_precision():
    from boolbench.config import clustering_encoder_entry
    from boolbench.retrieval.registry import encoding_of, encoding_params, same_vectors

    plain = validate_config(minimal())  # schema defaults: fp32, the model's own vectors
    assert plain["encoder"]["precision"] == "fp32"
    assert plain["models"]["minilm-l6"]["precision"] == "fp32"
    assert "precision" not in encoding_params(plain["models"]["minilm-l6"])  # as before the key
    assert plain["models"]["e5-small-q4"]["precision"] == "auto"  # 4-bit already

    fast = validate_config({**minimal(), "encoder": {"precision": "auto"}})  # config.yaml's
    minilm = fast["models"]["minilm-l6"]
    encoder = encoding_of(clustering_encoder_entry(fast["encoder"]))
    assert minilm["precision"] == "auto" and encoding_params(minilm)["precision"] == "auto"
    assert same_vectors(encoding_of(minilm), encoder)  # reuses its vectors
    own = {**minilm, "precision": "fp32"}  # a model that says otherwise encodes its own
    assert not same_vectors(encoding_of(own), encoder)
    shipped = load_config_file(Path(__file__).resolve().parents[1] / "config.yaml")
    assert validate_config(shipped)["models"]["minilm-l6"]["precision"] == "auto"


def test_the_audit_page_names_who_judged_the_sheet():
    config = validate_config(minimal())
    assert audit_source(config) == "the LLM local:qwen-0.5b (audit.judge)"
    config["llm"] |= {"backend": "openai", "model": "gpt-4o"}
    assert audit_source(config) == "the LLM gpt-4o (audit.judge)"
    config["audit"]["judgements"] = "mine.csv"
    assert audit_source(config) == "the filled sheet mine.csv"


@pytest.mark.parametrize(
    ("plan", "has_expressions", "has_train", "rows"),
    [
        (CorpusBaselines("m", ("all",)), True, True, set()),
        (CorpusBaselines("m", ("all",)), False, True, {"Oracle decomposition"}),
        (CorpusBaselines("m", ("not", "all")), True, False,
         {"Boolean contrastive (NOT)", "Boolean contrastive (all)"}),
        (CorpusBaselines("bm25", (), untrained="bm25 cannot be trained"), True, True,
         {"Boolean contrastive (all)"}),
        (CorpusBaselines("m", ()), True, False, set()),  # training not asked for
    ],
)  # fmt: skip
def test_table3_says_which_rows_cannot_be_computed(plan, has_expressions, has_train, rows):
    assert set(plan.not_computed(has_expressions, has_train)) == rows
