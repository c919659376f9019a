def candidate_inputs(wildcards):
    """The groups, the corpus, and for draw: closest of clusters the vectors they were
    clustered from."""
    inputs = {
        "groups": groups_file(wildcards),
        "corpus": artifact("corpus", corpus=wildcards.corpus),
    }
    entry = corpus_entry(wildcards)
    if entry["grouping"] != "document" and entry["candidates"]["draw"] == "closest":
        inputs["embeddings"] = artifact(
            "embeddings", corpus=wildcards.corpus, model=CLUSTERING_ENCODER
        )
        inputs["pids"] = artifact(
            "embedding_pids", corpus=wildcards.corpus, model=CLUSTERING_ENCODER
        )
    return inputs
