# Helpers of rules/evaluate.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


BM25_MODELS = name_pattern(models_of("bm25"))
FIRST_STAGE_MODELS = name_pattern(models_of(*DENSE_KINDS, "bm25"))
RERANKERS = name_pattern(models_of("cross-encoder"))


# What a search or a re-ranking writes: the runs of the questions and of the original
# queries, over the corpus and within the query's document.
RUN_OUTPUTS = {
    "run": artifact("run"),
    "original": artifact("original_run"),
    "document": artifact("document_run"),
    "document_original": artifact("original_document_run"),
}


def model_search_params(wildcards):
    """A model's entry without the keys that cannot change its run (and without the loading
    keys left at their defaults), with the corpus's passage template."""
    entry = model_entry(wildcards)
    keys = [k for k in entry if k != "shards"]
    return {
        k: entry[k] for k in non_default_keys(entry, keys)
    } | passage_template_param(wildcards)


def searched_questions(wildcards):
    """What a model searches: every written question of a generated corpus (the judge pools
    the runs before the filter decides), the imported questions otherwise."""
    key = "dataset" if is_imported(wildcards) else "written_questions"
    return artifact(key, corpus=wildcards.corpus)


def search_inputs(wildcards):
    corpus = wildcards.corpus
    inputs = {
        "questions": searched_questions(wildcards),
        "queries": artifact("original_queries", corpus=corpus),
        "qrels": artifact("original_qrels", corpus=corpus),
        "corpus": artifact("corpus", corpus=corpus),
    }
    return inputs | retriever_index(wildcards)


def rerank_inputs(wildcards):
    corpus = wildcards.corpus
    first_stage = {"corpus": corpus, "model": model_entry(wildcards)["rerank"]}
    runs = ("run", "original_run", "document_run", "original_document_run")
    return {key: artifact(key, **first_stage) for key in runs} | {
        "questions": searched_questions(wildcards),
        "queries": artifact("original_queries", corpus=corpus),
        "corpus": artifact("corpus", corpus=corpus),
    }


def rerank_depth(wildcards):
    return model_entry(wildcards)["depth"] or config["evaluation"]["depth"]


def interchange_outputs(corpus):
    """TREC runs of every model and TREC qrels; for generated questions also the dataset in
    the released and BEIR layouts (imported questions already are in a layout, and these
    exports copy the whole corpus: ask for them as targets)."""
    runs = [
        artifact(key, corpus=corpus, model=model)
        for model in corpus_models(corpus)
        for key in ("trec_run", "original_trec_run")
    ]
    exports = [] if corpus in IMPORTED else ["released_eval", "beir_qrels_test"]
    return runs + [artifact(key, corpus=corpus) for key in ["trec_qrels", *exports]]
