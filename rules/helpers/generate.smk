# Helpers of rules/generate.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


# Everything of `generation` but the prompts: each job gets only its own prompt (below), so
# changing one prompt reruns only the jobs that use it.
GENERATION_PARAMS = {
    k: v for k, v in config["generation"].items() if k not in ("prompts", "prompt_set")
}


def member_judge_params():
    """What the kinds job needs to ask the judge whether each candidate is of its group's kind
    (the same requests as the judge's, so the judge finds them in the cache)."""
    return {
        "prompt": prompt_params(ANSWERER_STEP),
        "answerer": FILTER_PARAMS,
        "max_passage_words": config["generation"]["max_passage_words"],
        "membership": TEMPLATES["membership"],
        "named": TEMPLATES["named"],
        "lead_words": config["pooling"]["lead_words"],
        # story groups (grouping: document): is a paragraph about the story
        "about": TEMPLATES["about"],
    }


def story_params(wildcards):
    """A corpus grouped by document asks about each window's story (stories.py): the prompts
    and the disjunctive template of story groups; None for grouping by cluster (kinds).
    """
    if corpus_entry(wildcards)["grouping"] != "document":
        return None
    # each job gets its own prompts: changing one reruns only the jobs that use it
    if wildcards.kind == "simple":
        return {"question": prompt_params("story")}
    return {
        "topic": prompt_params("topic"),
        "aspect": prompt_params("aspect"),
        "template": TEMPLATES["story_disjunctive"],
    }


def atomic_inputs(wildcards):
    """Simple questions are asked of the members of each group's kind (disjunctive)."""
    corpus = wildcards.corpus
    inputs = {"candidates": artifact("candidates", corpus=corpus)}
    if wildcards.kind == "simple":
        inputs["kinds"] = artifact(
            "atomic_questions", corpus=corpus, kind="disjunctive"
        )
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
    corpus = wildcards.corpus
    return {
        "written": artifact("written_questions", corpus=corpus),
        "simple": artifact("atomic_questions", corpus=corpus, kind="simple"),
        "disjunctive": artifact("atomic_questions", corpus=corpus, kind="disjunctive"),
        "candidates": artifact("candidates", corpus=corpus),
        "corpus": artifact("corpus", corpus=corpus),
        "runs": [artifact("run", corpus=corpus, model=m) for m in pool_models(corpus)],
    }
