# Shared by all rules: config loading and validation, wildcard constraints, input functions.
import os
import re
import sys

sys.path.insert(
    0, workflow.basedir
)  # the boolbench package, also without `pip install`

from snakemake.exceptions import WorkflowError

from boolbench.config import validate_config
from boolbench.corpus import SourceSpec
from boolbench.errors import BoolbenchError

# A --configfile given on the command line replaces the default config instead of merging
# into it (merging would mix the default corpora into the user's).
if not workflow.overwrite_configfiles:

    configfile: os.path.join(workflow.basedir, "config.yaml")


try:
    validate_config(config, source=" ".join(map(str, workflow.configfiles)) or "config")
    CORPORA = list(config["corpora"])
    SOURCE_INPUTS = {
        name: SourceSpec.from_config(entry).input_files()
        for name, entry in config["corpora"].items()
    }
except BoolbenchError as err:
    raise WorkflowError(str(err)) from None


wildcard_constraints:
    corpus="|".join(re.escape(c) for c in CORPORA),
    shard=r"\d+",
    n_shards=r"\d+",


def corpus_entry(wildcards):
    return config["corpora"][wildcards.corpus]


def source_inputs(wildcards):
    """The files a corpus is read from (corpus, and queries/qrels when it has them)."""
    return SOURCE_INPUTS[wildcards.corpus]


def source_params(wildcards):
    """The corpus entry without its per-stage sections (those feed later rules)."""
    entry = corpus_entry(wildcards)
    return {k: v for k, v in entry.items() if not isinstance(v, dict) or k == "columns"}


def encoder_params(wildcards):
    return corpus_entry(wildcards)["encoder"]


def embedding_shards(wildcards):
    n_shards = corpus_entry(wildcards)["encoder"]["shards"]
    return [
        f"results/{wildcards.corpus}/embeddings/shard-{i}-of-{n_shards}.npy"
        for i in range(n_shards)
    ]


def clustering_params(wildcards):
    settings = corpus_entry(wildcards)["clustering"]
    return {
        k: v for k, v in settings.items() if k not in ("sample_size", "svd_components")
    }


def groups_file(wildcards):
    """clusters.parquet or document_groups.parquet, by the corpus's grouping mode."""
    if corpus_entry(wildcards)["grouping"] == "document":
        return f"results/{wildcards.corpus}/document_groups.parquet"
    return f"results/{wildcards.corpus}/clusters.parquet"
