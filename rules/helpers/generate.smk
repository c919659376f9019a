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


def topical_params(wildcards):
    """The prompts and disjunctive template of each construction of stories.py (story, topic,
    page): which one a group gets is read from the data in the candidates job, so every job
    carries all three (each job only those of its own step)."""
    if wildcards.kind == "simple":
        return {
            c: {"question": prompt_params(p[2])} for c, p in TOPICAL_PROMPTS.items()
        }
    return {
        c: {
            "topic": prompt_params(p[0]) if p[0] else None,
            "aspect": prompt_params(p[1]),
            "template": TEMPLATES[f"{c}_disjunctive"],
        }
        for c, p in TOPICAL_PROMPTS.items()
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
