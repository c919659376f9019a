# Shared by several rule files (config loading and validation, wildcard constraints, the model
# registry's names, and input functions that more than one of them calls). The helpers of one
# of them are in rules/helpers/<stage>.smk, included at the top of that file. (snakemake --lint
# takes a line here with "rule", a space and later a colon for a rule definition, and allows
# none beside functions.)
import os
import re
import sys
from types import SimpleNamespace

sys.path.insert(
    0, workflow.basedir
)  # the boolbench package, also without `pip install`

from snakemake.exceptions import WorkflowError

from boolbench.artifacts import export_rules
from boolbench.config import (
    audit_source,
    check_corpus_sizes,
    clustering_encoder_entry,
    corpus_baselines,
    step_llm,
    validate_config,
)
from boolbench.constants import CLUSTERING_ENCODER, OPERATORS
from boolbench.corpus.pdf_collection import pdf_files
from boolbench.corpus.question_sets import question_facts
from boolbench.corpus.sources import SourceSpec
from boolbench.dataset_card import card_settings
from boolbench.errors import BoolbenchError
from boolbench.generation.prompts import resolve_prompts, resolve_templates, step_prompt
from boolbench.generation.stories import PROMPTS_OF as TOPICAL_PROMPTS
from boolbench.paths import artifact
from boolbench.report.figures import FIGURES, corpus_figures
from boolbench.report.pages import corpus_config
from boolbench.retrieval.registry import (
    DENSE_KINDS,
    encoding_of,
    non_default_keys,
    same_vectors,
    template_param,
)
from boolbench.running import (
    another_run_notice,
    forget_failed_jobs,
    forget_run,
    forward_stop_signals,
    record_run,
)

# A --configfile given on the command line replaces the default config instead of merging
# into it (merging would mix the default corpora into the user's).
if not workflow.overwrite_configfiles:

    configfile: os.path.join(workflow.basedir, "config.yaml")


try:
    CONFIG_SOURCE = " ".join(map(str, workflow.configfiles)) or "config"
    validate_config(config, source=CONFIG_SOURCE)
    check_corpus_sizes(config, source=CONFIG_SOURCE)
    CORPORA = list(config["corpora"])
    SOURCE_INPUTS = {
        name: SourceSpec.from_config(entry).input_files()
        for name, entry in config["corpora"].items()
    }
    # pdf corpora: their files (found at parse time, so an added file reruns the extraction,
    # which then reads only the new file), and ingestion reads the extracted passages.
    PDF_FILES = {
        name: [
            str(p) for p in pdf_files(entry["path"], f"corpora.{name}.path").values()
        ]
        for name, entry in config["corpora"].items()
        if entry["source"] == "pdf"
    }
    for name in PDF_FILES:
        SOURCE_INPUTS[name]["corpus"] = artifact("pdf_passages", corpus=name)
    # Corpora with `questions:` evaluate those questions: no encoding for clustering, no
    # clustering, generation or filtering job is planned for them. Whether the file has a
    # train split and recorded expressions decides which baselines can be computed.
    IMPORTED = {
        name: entry["questions"]
        for name, entry in config["corpora"].items()
        if entry["questions"] is not None
    }
    QUESTION_FACTS = {name: question_facts(path) for name, path in IMPORTED.items()}
    PROMPTS = resolve_prompts(
        config["generation"]["prompt_set"],
        config["llm"]["backend"],
        config["generation"]["prompts"],
    )
    TEMPLATES = resolve_templates()
except BoolbenchError as err:
    raise WorkflowError(str(err)) from None


# SIGTERM and Ctrl-C stop running jobs too (Snakemake alone would wait for them to finish);
# a run in progress is noted, so that a second run in this folder is told who holds it.
if workflow.is_main_process and (notice := another_run_notice()):
    print(notice, file=sys.stderr)


onstart:
    forward_stop_signals()
    if workflow.is_main_process:
        record_run()


onsuccess:
    forget_run()


onerror:
    forget_run()
    forget_failed_jobs(workflow)


# The question-generation chain (encoding for clustering, clustering, candidates, the LLM
# stages, their gathers and the dataset) runs before the model encodings when both could:
# everything that generates waits on it, while the encodings only have to be done by the time
# the questions are. A gather without it waits behind a model's encoding job (2 cores).
GENERATION_PRIORITY = 10


def llm_params(step):
    """The LLM settings a step's jobs see: `llm` with the step's `llm.steps` overrides, without
    `shards` (it only names the jobs' files: changing it must not rerun them)."""
    return step_llm(config, step)


FILTER_PARAMS = {k: v for k, v in config["filter"].items() if k != "mode"}
# The answerer's prompt: the yes/no judge, or the paper's free answer.
ANSWERER_STEP = "judge" if config["filter"]["method"] == "judge" else "answerer"


def llm_shards(wildcards, key):
    """The shard files (artifact `key`) of one LLM stage's jobs."""
    n_shards = config["llm"]["shards"]
    return [
        artifact(key, shard=i, n_shards=n_shards, **dict(wildcards.items()))
        for i in range(n_shards)
    ]


def made_with(shard_params):
    """A gather job's parameter: the `params` of the shard jobs it gathers, evaluated for its
    wildcards. Snakemake (since 8.26) records a failed job's params as if it had finished and
    deletes its output, and does not rerun a missing intermediate file whose consumer is up to
    date: a shard job that failed after a settings change would otherwise never be redone, and
    the gathered file would keep the previous settings' rows. With the shards' params, the
    gather sees the change (its own params are recorded only when it succeeds) and asks for
    the missing shards."""
    return lambda wildcards: {
        key: value(wildcards) if callable(value) else value
        for key, value in shard_params.items()
    }


# API keys reach cluster jobs through Snakemake's envvars (never through config).
API_KEY_ENVS = sorted(
    {
        settings["api_key_env"]
        for settings in [
            llm_params(step) for step in ["simple", *config["llm"]["steps"], "audit"]
        ]
        if settings["backend"] == "openai" and settings["api_key_env"]
    }
)
if API_KEY_ENVS:

    envvars:
        *API_KEY_ENVS,


# The retriever registry, by kind: each kind's rules only match its own model names.
MODELS = list(config["models"])
BASELINES = config["baselines"]
# Per corpus: Table 3's retriever and the subsets contrastive training runs on (an unset
# baselines.retriever or train_on follows the corpus's models).
CORPUS_BASELINES = {name: corpus_baselines(config, name) for name in CORPORA}
# The contrastive models of any corpus: its retriever's entry with the trained model's folder.
TRAINED_MODELS = list(
    dict.fromkeys(
        f"contrastive-{subset}"
        for plan in CORPUS_BASELINES.values()
        for subset in plan.train_on
    )
)
# Query-side training: a trained model searches the retriever's passage vectors and index.
QUERY_SIDE_ONLY = BASELINES["training"]["side"] == "query"


def models_of(*kinds):
    names = [m for m in MODELS if config["models"][m]["kind"] in kinds]
    if "sentence-transformers" in kinds:
        names += TRAINED_MODELS
    return names


def name_pattern(names):
    """A wildcard constraint matching exactly `names` (never matching when there are none)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def corpus_models(corpus):
    """The registry models evaluated on a corpus (its Table 2 rows, in order)."""
    return config["corpora"][corpus]["models"] or MODELS


# Dense models (index and search), and every model that encodes the corpus: these and the
# clustering encoder.
DENSE_MODELS = name_pattern(models_of(*DENSE_KINDS))
ENCODED_MODELS = name_pattern([CLUSTERING_ENCODER] + models_of(*DENSE_KINDS))


def model_scores(wildcards):
    """The per-question scores of every model of the corpus (Table 2's rows)."""
    return [
        artifact("scores", corpus=wildcards.corpus, model=m)
        for m in corpus_models(wildcards.corpus)
    ]


def is_imported(wildcards):
    return wildcards.corpus in IMPORTED


wildcard_constraints:
    corpus="|".join(re.escape(c) for c in CORPORA),
    model=name_pattern(MODELS + TRAINED_MODELS),
    subset="and|or|not|all",
    method="decomposed|oracle",
    shard=r"\d+",
    n_shards=r"\d+",
    kind="simple|disjunctive",
    operator="and|or|not",
    figure="|".join(FIGURES),


def corpus_entry(wildcards):
    return config["corpora"][wildcards.corpus]


def groups_file(wildcards):
    """The groups candidates are drawn from: clusters.parquet (the sample),
    corpus_clusters.parquet (clustering.assign: all) or document_groups.parquet."""
    if corpus_entry(wildcards)["grouping"] == "document":
        key = "document_groups"
    elif corpus_entry(wildcards)["clustering"]["assign"] == "all":
        key = "corpus_clusters"
    else:
        key = "clusters"
    return artifact(key, corpus=wildcards.corpus)


def prompt_params(step):
    """The system message, template and mode of one step, as a job parameter."""
    prompt = step_prompt(PROMPTS, step)
    params = {"system": prompt.system, "template": prompt.template}
    return params | ({"mode": prompt.mode} if prompt.mode else {})


def retriever_of(corpus):
    """The baselines' retriever on a corpus."""
    return CORPUS_BASELINES[corpus].retriever


def model_entry(wildcards):
    if wildcards.model == CLUSTERING_ENCODER:
        return clustering_encoder_entry(corpus_entry(wildcards)["encoder"])
    if wildcards.model in TRAINED_MODELS:
        return config["models"][retriever_of(wildcards.corpus)] | {
            "model": trained_model(wildcards)
        }
    return config["models"][wildcards.model]


def trained_model(wildcards):
    subset = wildcards.model.removeprefix("contrastive-")
    return artifact("contrastive_model", corpus=wildcards.corpus, subset=subset)


def trained_model_input(wildcards):
    """A contrastive model's folder (an input of its encoding and search jobs), else nothing."""
    return [trained_model(wildcards)] if wildcards.model in TRAINED_MODELS else []


def passage_template_param(wildcards):
    """The corpus's passage template as part of a model's params (registry.template_param)."""
    return template_param(corpus_entry(wildcards)["passage_template"])


def model_encoding(wildcards):
    """What determines a model's passage vectors (parameters of its encoding jobs); the
    clustering encoder reads the passage text alone."""
    if wildcards.model == CLUSTERING_ENCODER:
        return encoding_of(model_entry(wildcards))
    return encoding_of(
        model_entry(wildcards), corpus_entry(wildcards)["passage_template"]
    )


def as_retriever(wildcards):
    """The wildcards of the baselines' retriever on the same corpus."""
    return SimpleNamespace(
        corpus=wildcards.corpus, model=retriever_of(wildcards.corpus)
    )


def model_embeddings(wildcards):
    """A model's passage vectors: the clustering encoder's when its encoding parameters are
    the same (a corpus with `questions:` has none); the retriever's for a model trained on the
    query side only."""
    if wildcards.model in TRAINED_MODELS and QUERY_SIDE_ONLY:
        return model_embeddings(as_retriever(wildcards))
    encoder = SimpleNamespace(corpus=wildcards.corpus, model=CLUSTERING_ENCODER)
    if not is_imported(wildcards) and same_vectors(
        model_encoding(wildcards), model_encoding(encoder)
    ):
        wildcards = encoder
    at = {"corpus": wildcards.corpus, "model": wildcards.model}
    return {
        "embeddings": artifact("embeddings", **at),
        "pids": artifact("embedding_pids", **at),
    }


def retriever_index(wildcards):
    """The index (and, for dense models, the embeddings) a model searches."""
    if wildcards.model in TRAINED_MODELS and QUERY_SIDE_ONLY:
        return retriever_index(as_retriever(wildcards)) | {
            "trained": trained_model_input(wildcards)
        }
    at = {"corpus": wildcards.corpus, "model": wildcards.model}
    if model_entry(wildcards)["kind"] == "bm25":
        return {"index": artifact("bm25_index", **at)}
    return model_embeddings(wildcards) | {
        "index": artifact("faiss_index", **at),
        "trained": trained_model_input(wildcards),
    }
