# Shared by all rules: config loading and validation, wildcard constraints, input functions.
import os
import re
import sys
from types import SimpleNamespace

sys.path.insert(
    0, workflow.basedir
)  # the boolbench package, also without `pip install`

from snakemake.exceptions import WorkflowError

from boolbench.artifacts import export_rules
from boolbench.baselines.contrastive import contrastive_label
from boolbench.config import (
    DEFAULT_TRAIN_ON,
    check_corpus_sizes,
    corpus_baselines,
    step_llm,
    validate_config,
)
from boolbench.constants import OPERATORS
from boolbench.corpus.pdf_collection import pdf_files
from boolbench.corpus.question_sets import question_facts
from boolbench.corpus.sources import SourceSpec
from boolbench.dataset_card import card_settings
from boolbench.errors import BoolbenchError
from boolbench.generation.prompts import resolve_prompts, resolve_templates, step_prompt
from boolbench.report.figures import FIGURES
from boolbench.report.pages import corpus_config
from boolbench.retrieval.registry import (
    DENSE_KINDS,
    encoding_params,
    non_default_keys,
    shares_clustering_embeddings,
)
from boolbench.running import (
    another_run_notice,
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
        SOURCE_INPUTS[name]["corpus"] = f"results/{name}/pdf/passages.parquet"
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


# Everything of `generation` but the prompts: each job gets only its own prompt (below), so
# changing one prompt reruns only the jobs that use it.
GENERATION_PARAMS = {
    k: v for k, v in config["generation"].items() if k not in ("prompts", "prompt_set")
}

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


def member_judge_params():
    """What the kinds job needs to ask the judge whether each candidate is of its group's kind
    (the same requests as the judge's, so the judge finds them in the cache)."""
    return {
        "prompt": prompt_params(ANSWERER_STEP),
        "answerer": FILTER_PARAMS,
        "max_passage_words": config["generation"]["max_passage_words"],
        "membership": TEMPLATES["membership"],
        "lead_words": config["pooling"]["lead_words"],
    }


def llm_shards(wildcards, step, ext):
    """The shard files of one LLM stage (`ext`: parquet for the rows, json for accounting)."""
    n_shards = config["llm"]["shards"]
    return [
        f"results/{wildcards.corpus}/shards/{step}/shard-{i}-of-{n_shards}.{ext}"
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


DENSE_MODELS = name_pattern(models_of(*DENSE_KINDS))
BM25_MODELS = name_pattern(models_of("bm25"))
FIRST_STAGE_MODELS = name_pattern(models_of(*DENSE_KINDS, "bm25"))
RERANKERS = name_pattern(models_of("cross-encoder"))


GENERATED_CORPORA = name_pattern([c for c in CORPORA if c not in IMPORTED])
IMPORTED_CORPORA = name_pattern(list(IMPORTED))


def corpus_models(corpus):
    """The registry models evaluated on a corpus (its Table 2 rows, in order)."""
    return config["corpora"][corpus]["models"] or MODELS


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


def source_inputs(wildcards):
    """The files a corpus is read from (corpus, and queries/qrels when it has them).

    Absolute paths (the packaged Wikipedia corpus, a dataset on a shared mount) are read in
    place even when a storage provider moves results (profiles/kubernetes); relative ones
    are part of the working directory and go through it."""
    return {
        name: local(path) if os.path.isabs(path) else path
        for name, path in SOURCE_INPUTS[wildcards.corpus].items()
    }


# Corpus keys that ingestion does not read (`questions` only matters for a BEIR folder that is
# also the questions: its queries are then not the original queries).
NOT_SOURCE_KEYS = ("reference", "passage_template", "models", "questions")


def source_params(wildcards):
    """The corpus entry without its per-stage sections (those feed later rules) and without
    the keys of later stages."""
    entry = corpus_entry(wildcards)
    params = {
        k: v
        for k, v in entry.items()
        if (not isinstance(v, dict) or k == "columns") and k not in NOT_SOURCE_KEYS
    }
    if entry["source"] == "beir" and entry["questions"] is not None:
        params["questions"] = entry["questions"]
    return params


def questions_inputs(wildcards):
    """The files of a corpus's `questions:` (a BEIR folder: its queries and qrels), read in
    place when absolute (as in source_inputs)."""
    path = IMPORTED[wildcards.corpus]
    if os.path.isdir(path):
        files = [os.path.join(path, "queries.jsonl")]
        qrels = os.path.join(path, "qrels")
        if os.path.isdir(qrels):
            files += sorted(
                os.path.join(qrels, f) for f in os.listdir(qrels) if f.endswith(".tsv")
            )
    else:
        files = [path]
    return [local(f) if os.path.isabs(f) else f for f in files]


def pdf_inputs(wildcards):
    """A pdf corpus's files (absolute ones read in place, as in source_inputs)."""
    return [local(p) if os.path.isabs(p) else p for p in PDF_FILES[wildcards.corpus]]


def extraction_quality_outputs(corpus):
    """The DRC extraction scores of a pdf corpus that has reference texts."""
    if config["corpora"][corpus].get("reference") is None:
        return []
    return [
        f"results/{corpus}/pdf/extraction_quality.{ext}" for ext in ("parquet", "json")
    ]


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
        k: v
        for k, v in settings.items()
        if k not in ("sample_size", "svd_components", "assign")
    }


def groups_file(wildcards):
    """The groups candidates are drawn from: clusters.parquet (the sample),
    corpus_clusters.parquet (clustering.assign: all) or document_groups.parquet."""
    if corpus_entry(wildcards)["grouping"] == "document":
        return f"results/{wildcards.corpus}/document_groups.parquet"
    if corpus_entry(wildcards)["clustering"]["assign"] == "all":
        return f"results/{wildcards.corpus}/corpus_clusters.parquet"
    return f"results/{wildcards.corpus}/clusters.parquet"


def prompt_params(step):
    """The system message, template and mode of one step, as a job parameter."""
    prompt = step_prompt(PROMPTS, step)
    params = {"system": prompt.system, "template": prompt.template}
    return params | ({"mode": prompt.mode} if prompt.mode else {})


def atomic_inputs(wildcards):
    """Simple questions are asked of the members of each group's kind (disjunctive)."""
    base = f"results/{wildcards.corpus}"
    inputs = {"candidates": f"{base}/candidates.parquet"}
    if wildcards.kind == "simple":
        inputs["kinds"] = f"{base}/questions/disjunctive.parquet"
    return inputs


def pool_models(corpus):
    """The models whose runs the judge pools (pooling.models, else the corpus's); none at
    depth 0, so that the judge then waits for no search."""
    if not config["pooling"]["depth"]:
        return []
    return config["pooling"]["models"] or corpus_models(corpus)


def pooling_params(corpus):
    return {
        "depth": config["pooling"]["depth"],
        "lead_words": config["pooling"]["lead_words"],
        "models": pool_models(corpus),
    }


def judge_inputs(wildcards):
    """The written questions, their construction, the passages, and the runs pooled."""
    base = f"results/{wildcards.corpus}"
    return {
        "written": f"{base}/questions/written.parquet",
        "simple": f"{base}/questions/simple.parquet",
        "disjunctive": f"{base}/questions/disjunctive.parquet",
        "candidates": f"{base}/candidates.parquet",
        "corpus": f"{base}/corpus.parquet",
        "runs": [f"{base}/runs/{m}.parquet" for m in pool_models(wildcards.corpus)],
    }


def retriever_of(corpus):
    """The baselines' retriever on a corpus."""
    return CORPUS_BASELINES[corpus].retriever


def model_entry(wildcards):
    if wildcards.model in TRAINED_MODELS:
        return config["models"][retriever_of(wildcards.corpus)] | {
            "model": trained_model(wildcards)
        }
    return config["models"][wildcards.model]


def trained_model(wildcards):
    return f"results/{wildcards.corpus}/models/{wildcards.model}/model"


def trained_model_input(wildcards):
    """A contrastive model's folder (an input of its encoding and search jobs), else nothing."""
    return [trained_model(wildcards)] if wildcards.model in TRAINED_MODELS else []


def passage_template_param(wildcards):
    """The corpus's passage template as part of a model's params, where it is not the
    default (so that results made before templates existed stay valid)."""
    template = corpus_entry(wildcards)["passage_template"]
    return {} if template == "{text}" else {"passage_template": template}


def model_encoding(wildcards):
    """What determines a model's passage vectors (parameters of its encoding jobs)."""
    return encoding_params(model_entry(wildcards)) | passage_template_param(wildcards)


def model_search_params(wildcards):
    """A model's entry without the keys that cannot change its run (and without the loading
    keys left at their defaults), with the corpus's passage template."""
    entry = model_entry(wildcards)
    keys = [k for k in entry if k != "shards"]
    return {
        k: entry[k] for k in non_default_keys(entry, keys)
    } | passage_template_param(wildcards)


def model_shards(wildcards):
    n_shards = model_entry(wildcards)["shards"]
    base = f"results/{wildcards.corpus}/models/{wildcards.model}"
    return [f"{base}/shard-{i}-of-{n_shards}.npy" for i in range(n_shards)]


def as_retriever(wildcards):
    """The wildcards of the baselines' retriever on the same corpus."""
    return SimpleNamespace(
        corpus=wildcards.corpus, model=retriever_of(wildcards.corpus)
    )


def model_embeddings(wildcards):
    """The clustering encoder's embeddings when the model would compute the same vectors
    (a corpus with `questions:` has none); the retriever's for a model trained on the query
    side only."""
    if wildcards.model in TRAINED_MODELS and QUERY_SIDE_ONLY:
        return model_embeddings(as_retriever(wildcards))
    if not is_imported(wildcards) and shares_clustering_embeddings(
        model_entry(wildcards),
        encoder_params(wildcards),
        corpus_entry(wildcards)["passage_template"],
    ):
        return {
            "embeddings": f"results/{wildcards.corpus}/embeddings.npy",
            "pids": f"results/{wildcards.corpus}/embeddings.pids.parquet",
        }
    base = f"results/{wildcards.corpus}/models/{wildcards.model}"
    return {
        "embeddings": f"{base}/embeddings.npy",
        "pids": f"{base}/embeddings.pids.parquet",
    }


def searched_questions(wildcards):
    """What a model searches: every written question of a generated corpus (the judge pools
    the runs before the filter decides), the imported questions otherwise."""
    base = f"results/{wildcards.corpus}"
    if is_imported(wildcards):
        return f"{base}/boolquestions.parquet"
    return f"{base}/questions/written.parquet"


def search_inputs(wildcards):
    base = f"results/{wildcards.corpus}"
    inputs = {
        "questions": searched_questions(wildcards),
        "queries": f"{base}/original_queries.parquet",
        "qrels": f"{base}/original_qrels.parquet",
        "corpus": f"{base}/corpus.parquet",
    }
    return inputs | retriever_index(wildcards)


def retriever_index(wildcards):
    """The index (and, for dense models, the embeddings) a model searches."""
    if wildcards.model in TRAINED_MODELS and QUERY_SIDE_ONLY:
        return retriever_index(as_retriever(wildcards)) | {
            "trained": trained_model_input(wildcards)
        }
    base = f"results/{wildcards.corpus}/models/{wildcards.model}"
    if model_entry(wildcards)["kind"] == "bm25":
        return {"index": f"{base}/bm25"}
    return model_embeddings(wildcards) | {
        "index": f"{base}/index.faiss",
        "trained": trained_model_input(wildcards),
    }


def baseline_retriever_params(wildcards):
    """The baselines' retriever entry (loading keys at their defaults left out), with the
    corpus's passage template."""
    entry = config["models"][retriever_of(wildcards.corpus)]
    return {
        k: entry[k] for k in non_default_keys(entry, entry)
    } | passage_template_param(wildcards)


def baseline_run_inputs(wildcards):
    """A Boolean-operation run needs the retriever's index, run and the expressions."""
    retriever = retriever_of(wildcards.corpus)
    base = f"results/{wildcards.corpus}"
    inputs = {
        "questions": f"{base}/boolquestions.parquet",
        "base_run": f"{base}/runs/{retriever}.parquet",
    }
    if wildcards.method == "decomposed":
        inputs["decomposed"] = f"{base}/baselines/decomposed.parquet"
    return inputs | retriever_index(as_retriever(wildcards))


def has_oracle(corpus):
    """The oracle baseline needs the Boolean expressions recorded at generation."""
    return corpus not in IMPORTED or QUESTION_FACTS[corpus].has_expressions


def trained_models_of(corpus):
    """The contrastive models of a corpus: none when its questions have no train split."""
    names = [f"contrastive-{subset}" for subset in CORPUS_BASELINES[corpus].train_on]
    if corpus in IMPORTED and not QUESTION_FACTS[corpus].has_train:
        return []
    return names


def not_computed(wildcards):
    """Table 3 rows that the corpus's questions or models cannot give, and why."""
    rows = {}
    plan = CORPUS_BASELINES[wildcards.corpus]
    if not has_oracle(wildcards.corpus):
        rows["Oracle decomposition"] = (
            "the questions carry no recorded Boolean expressions"
        )
    if plan.untrained:
        for subset in DEFAULT_TRAIN_ON:
            rows[contrastive_label(f"contrastive-{subset}")] = plan.untrained
    elif not trained_models_of(wildcards.corpus):
        for subset in plan.train_on:
            rows[contrastive_label(f"contrastive-{subset}")] = (
                "the questions have no train split (a `split` field) to train on"
            )
    return rows


def table3_inputs(wildcards):
    base = f"results/{wildcards.corpus}"
    inputs = {
        "base_scores": f"{base}/scores/{retriever_of(wildcards.corpus)}.parquet",
        "decomposed": f"{base}/baselines/runs/decomposed.parquet",
        "expressions": f"{base}/baselines/decomposed.parquet",
        "questions": f"{base}/boolquestions.parquet",
        "contrastive": [
            f"{base}/scores/{m}.parquet" for m in trained_models_of(wildcards.corpus)
        ],
    }
    if has_oracle(wildcards.corpus):
        inputs["oracle"] = f"{base}/baselines/runs/oracle.parquet"
    return inputs


def training_inputs(wildcards):
    """A contrastive model's training data: the simple questions too, where there are some;
    query-side training also reads the retriever's passage vectors."""
    base = f"results/{wildcards.corpus}"
    inputs = {
        "questions": f"{base}/boolquestions.parquet",
        "corpus": f"{base}/corpus.parquet",
    }
    if not is_imported(wildcards):
        inputs["simple"] = f"{base}/questions/simple.parquet"
    if QUERY_SIDE_ONLY:
        inputs |= model_embeddings(as_retriever(wildcards))
    return inputs


def rerank_inputs(wildcards):
    base = f"results/{wildcards.corpus}"
    first_stage = model_entry(wildcards)["rerank"]
    return {
        "run": f"{base}/runs/{first_stage}.parquet",
        "original_run": f"{base}/runs/original/{first_stage}.parquet",
        "document_run": f"{base}/runs/document/{first_stage}.parquet",
        "original_document_run": f"{base}/runs/document/original/{first_stage}.parquet",
        "questions": searched_questions(wildcards),
        "queries": f"{base}/original_queries.parquet",
        "corpus": f"{base}/corpus.parquet",
    }


def rerank_depth(wildcards):
    return model_entry(wildcards)["depth"] or config["evaluation"]["depth"]


def figures_of(corpus):
    """The report's figures of a corpus (grouping by document has no SVD; imported
    questions only the retrieval figures)."""
    names = list(FIGURES)
    if corpus in IMPORTED:
        names = [n for n in names if FIGURES[n].category == "Retrieval"]
    elif config["corpora"][corpus]["grouping"] == "document":
        names.remove("svd_variance")
    return [f"results/{corpus}/figures/{name}.png" for name in names]


def figure_inputs(wildcards):
    """The artifacts one figure is drawn from."""
    base = f"results/{wildcards.corpus}"
    return {
        "mrr_by_type": {"metrics": f"{base}/metrics.parquet"},
        "negrecall_vs_mrr": {"metrics": f"{base}/metrics.parquet"},
        "group_sizes": {"groups": groups_file(wildcards)},
        "svd_variance": {"variance": f"{base}/svd_variance.parquet"},
        "pass_rates": {
            "all": f"{base}/boolquestions_all.parquet",
            "simple": f"{base}/questions/simple.parquet",
            "disjunctive": f"{base}/questions/disjunctive.parquet",
        },
    }[wildcards.figure]


def figure_settings(wildcards):
    """The models and split of a retrieval figure (so a registry change reruns only those)."""
    if FIGURES[wildcards.figure].category == "Retrieval":
        return {
            "models": corpus_models(wildcards.corpus),
            "split": config["evaluation"]["table_split"],
        }
    return {}


# The dataset card of the exports (boolbench/dataset_card.py) reports these settings: as
# params, a change to any of them rewrites the exports.
def card_params(wildcards):
    return card_settings(
        config,
        wildcards.corpus,
        is_imported(wildcards),
        corpus_models(wildcards.corpus),
    )


def llm_accounting_inputs(wildcards):
    """Every LLM job's accounting, by step name (imported questions: the decomposition)."""
    base = f"results/{wildcards.corpus}/llm_accounting"
    steps = []
    if not is_imported(wildcards):
        steps = ["simple", "disjunctive"]
        steps += [f"compose_{op}" for op in OPERATORS] + ["filter"]
    return {step: f"{base}/{step}.json" for step in [*steps, "decompose"]}


def audit_runs(wildcards):
    """The runs whose top audit.depth the audit sheet shows: every model of the corpus."""
    return [
        f"results/{wildcards.corpus}/runs/{model}.parquet"
        for model in corpus_models(wildcards.corpus)
    ]


# The LLM judge's yes/no prompts, by the sheet column they fill (answers: the filter's judge).
AUDIT_PROMPTS = {
    "answers": prompt_params("judge"),
    "part": prompt_params("audit_part"),
    "natural": prompt_params("audit_natural"),
    "operator": prompt_params("audit_operator"),
}


def audit_judgements(wildcards):
    """The audit's sheet, its key and its judgements: a filled sheet named in
    audit.judgements, or the LLM judge's (audit.judge)."""
    base = f"results/{wildcards.corpus}/audit"
    judged = config["audit"]["judgements"]
    if judged is None:
        judged = f"{base}/llm_judgements.csv"
    elif os.path.isabs(judged):
        judged = local(judged)
    return {
        "sheet": f"{base}/sheet.csv",
        "key": f"{base}/key.csv",
        "judgements": judged,
    }


def audit_source():
    """Who judged the audit sheet, in words (for the confusion page)."""
    if config["audit"]["judgements"] is not None:
        return f"the filled sheet {config['audit']['judgements']}"
    judge = llm_params("audit")
    name = (
        judge["model"]
        if judge["backend"] == "openai"
        else f"local:{judge['local_model']}"
    )
    return f"the LLM {name} (audit.judge)"


def audit_outputs(corpus):
    """The audit sheet of every run, and its confusion matrix when someone judges it."""
    base = f"results/{corpus}/audit"
    judged = (
        config["audit"]["judgements"] is not None
        or config["audit"]["judge"] is not None
    )
    return [f"{base}/sheet.csv", *([f"{base}/confusion.csv"] if judged else [])]


def report_inputs(corpus):
    """What `snakemake --report` shows of a corpus beyond Tables 1-3 (imported questions have
    no generation examples)."""
    base = f"results/{corpus}"
    examples = [] if corpus in IMPORTED else [f"{base}/report/examples.html"]
    return [
        *figures_of(corpus),
        *audit_outputs(corpus),
        f"{base}/report/rankings.html",
        f"{base}/tables/significance.html",
        f"{base}/tables/llm_accounting.html",
        *examples,
        f"{base}/report/config.html",
    ]


def interchange_outputs(corpus):
    """TREC runs of every model and TREC qrels; for generated questions also the dataset in
    the released and BEIR layouts (imported questions already are in a layout, and these
    exports copy the whole corpus: ask for them as targets)."""
    base = f"results/{corpus}"
    runs = [
        f"{base}/runs/{name}{model}.trec"
        for model in corpus_models(corpus)
        for name in ("", "original/")
    ]
    exports = [f"{base}/released/eval.jsonl", f"{base}/beir/qrels/test.tsv"]
    return [*runs, f"{base}/trec/qrels.txt", *([] if corpus in IMPORTED else exports)]
