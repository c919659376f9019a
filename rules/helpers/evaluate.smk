# Helpers of rules/evaluate.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


BM25_MODELS = name_pattern(models_of("bm25"))
FIRST_STAGE_MODELS = name_pattern(models_of(*DENSE_KINDS, "bm25"))
RERANKERS = name_pattern(models_of("cross-encoder"))


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
