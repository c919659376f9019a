# Helpers of rules/corpus.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


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


def pdf_inputs(wildcards):
    """A pdf corpus's files (absolute ones read in place, as in source_inputs)."""
    return [local(p) if os.path.isabs(p) else p for p in PDF_FILES[wildcards.corpus]]


def extraction_quality_outputs(corpus):
    """The DRC extraction scores of a pdf corpus that has reference texts."""
    if config["corpora"][corpus].get("reference") is None:
        return []
    return [
        artifact(key, corpus=corpus)
        for key in ("extraction_quality", "extraction_quality_summary")
    ]
