# LLM stages (paper sections 4.2-4.4): atomic questions (the kind a group's passages share, a
# simple question per member), AND/OR/NOT composition, and the judge (cyclic-consistency
# filter and pooling). Each job starts its own LLM session (for backend local, the embedded
# llama.cpp server inside the job, only when the response cache cannot answer) and holds one
# `llm_slots` unit, so the scheduler caps how many LLM jobs run at once. Each stage runs as
# `llm.shards` jobs (group g in shard g % n), gathered by a local rule.


include: "helpers/generate.smk"


# The params of each stage's shard jobs, which its gather job carries too (made_with).
MEMBER_JUDGE_PARAMS = member_judge_params()
ATOMIC_PARAMS = {
    "llm": lambda wc: llm_params(wc.kind),
    "seed": config["seed"],
    # disjunctive: the kind the group's passages share; simple: a question per member
    "prompt": lambda wc: prompt_params(
        "kinds" if wc.kind == "disjunctive" else "simple"
    ),
    "template": lambda wc: (
        TEMPLATES["disjunctive"] if wc.kind == "disjunctive" else None
    ),
    # how many questions each group gives is composition's: changing it reruns no atomic job
    "generation": {k: v for k, v in GENERATION_PARAMS.items() if k != "per_group"},
    # disjunctive: how members without a usable title get a subject
    "subject_prompt": lambda wc: (
        prompt_params("subject") if wc.kind == "disjunctive" else None
    ),
    # disjunctive: the judge's membership reads, which keep the kind's true members only
    "member_judge": lambda wc: (
        MEMBER_JUDGE_PARAMS if wc.kind == "disjunctive" else None
    ),
    # disjunctive: each member's sort of the kind (what OR questions ask for)
    "sort_prompt": lambda wc: (
        prompt_params("sort") if wc.kind == "disjunctive" else None
    ),
    # disjunctive: each member's place (what OR questions ask for, before two sorts)
    "place_prompt": lambda wc: (
        prompt_params("place") if wc.kind == "disjunctive" else None
    ),
    # groups of a story, topic or page (stories.py): their topics and aspects, not a kind
    "topical": topical_params,
}
COMPOSE_PARAMS = {
    "llm": lambda wc: llm_params(wc.operator),
    "seed": config["seed"],
    "prompt": lambda wc: prompt_params(wc.operator),
    "forms": lambda wc: TEMPLATES[wc.operator],
    "place_forms": lambda wc: TEMPLATES["or_place"] if wc.operator == "or" else None,
    # groups of a story, topic or page (stories.py): AND, OR and NOT over their aspects
    "story_forms": lambda wc: {
        c: TEMPLATES[f"{c}_{wc.operator}"] for c in TOPICAL_PROMPTS
    },
    "generation": GENERATION_PARAMS,
    # the split is decided here (before split.by, results were split by group: they rerun)
    "split": {
        "by": config["split"]["by"],
        "train_fraction": config["split"]["train_fraction"],
    },
}
ANSWER_PARAMS = {
    "llm": llm_params("filter"),
    "seed": config["seed"],
    "prompt": prompt_params(ANSWERER_STEP),
    "answerer": FILTER_PARAMS,
    "mode": config["filter"]["mode"],
    "max_passage_words": config["generation"]["max_passage_words"],
    "pooling": lambda wc: pooling_params(wc.corpus),
    "membership": lambda wc: TEMPLATES["membership"],  # a function: its braces stay
    "named": lambda wc: TEMPLATES["named"],
    "about": lambda wc: TEMPLATES["about"],
}


rule atomic_questions:
    input:
        unpack(atomic_inputs),
    output:
        questions=temp(artifact("atomic_shard")),
        accounting=temp(artifact("atomic_shard_accounting")),
    log:
        "logs/{corpus}/{kind}_questions/shard-{shard}-of-{n_shards}.log",
    benchmark:
        "benchmarks/{corpus}/{kind}_questions/shard-{shard}-of-{n_shards}.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/llm.yaml"
    threads: 2
    resources:
        llm_slots=1,
    params:
        **ATOMIC_PARAMS,
    script:
        "../workflow_scripts/atomic_questions.py"


rule compose_questions:
    input:
        candidates=artifact("candidates"),
        simple=artifact("atomic_questions", kind="simple"),
        disjunctive=artifact("atomic_questions", kind="disjunctive"),
    output:
        questions=temp(artifact("compose_shard")),
        accounting=temp(artifact("compose_shard_accounting")),
    log:
        "logs/{corpus}/compose_{operator}/shard-{shard}-of-{n_shards}.log",
    benchmark:
        "benchmarks/{corpus}/compose_{operator}/shard-{shard}-of-{n_shards}.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/llm.yaml"
    threads: 2
    resources:
        llm_slots=1,
    params:
        **COMPOSE_PARAMS,
    script:
        "../workflow_scripts/compose_questions.py"


# What the models search before the judge: every written question (local: it only
# concatenates).
rule written_questions:
    input:
        questions=expand(
            artifact("composed_questions"), operator=OPERATORS, allow_missing=True
        ),
    output:
        artifact("written_questions"),
    log:
        "logs/{corpus}/written_questions.log",
    priority: GENERATION_PRIORITY
    localrule: True
    conda:
        "../envs/corpus.yaml"
    script:
        "../workflow_scripts/written_questions.py"


# The judge (paper section 4.4 and TREC-style pooling): the filter's reading of each labelled
# pair and the answerer check, then every pooled model's top passages of the questions it keeps.
rule judge_questions:
    input:
        unpack(judge_inputs),
    output:
        answers=temp(artifact("answers_shard")),
        check=temp(artifact("answerer_check_shard")),
        pooled=temp(artifact("pooled_shard")),
        accounting=temp(artifact("judge_shard_accounting")),
    log:
        "logs/{corpus}/filter/shard-{shard}-of-{n_shards}.log",
    benchmark:
        "benchmarks/{corpus}/filter/shard-{shard}-of-{n_shards}.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/llm.yaml"
    threads: 2
    resources:
        llm_slots=1,
    params:
        **ANSWER_PARAMS,
    script:
        "../workflow_scripts/judge_questions.py"


# Gathering: one file per stage, the same for every shard count (see steps.gather_shards).
# Local rules: they only concatenate, and on a cluster would otherwise wait in the queue.
# Each carries its shards' params (made_with, in common.smk says why). One rule, used with
# each stage's files (and the decomposition's in baselines.smk).


rule gather_atomic_questions:
    input:
        questions=lambda wc: llm_shards(wc, "atomic_shard"),
        accounting=lambda wc: llm_shards(wc, "atomic_shard_accounting"),
    output:
        questions=artifact("atomic_questions"),
        accounting=artifact("atomic_accounting"),
    log:
        "logs/{corpus}/gather_{kind}_questions.log",
    priority: GENERATION_PRIORITY
    localrule: True
    conda:
        "../envs/llm.yaml"
    params:
        shards=made_with(ATOMIC_PARAMS),
    script:
        "../workflow_scripts/gather_stage.py"


use rule gather_atomic_questions as gather_composed_questions with:
    input:
        questions=lambda wc: llm_shards(wc, "compose_shard"),
        accounting=lambda wc: llm_shards(wc, "compose_shard_accounting"),
    output:
        questions=artifact("composed_questions"),
        accounting=artifact("compose_accounting"),
    log:
        "logs/{corpus}/gather_compose_{operator}.log",
    params:
        shards=made_with(COMPOSE_PARAMS),


use rule gather_atomic_questions as gather_answers with:
    input:
        answers=lambda wc: llm_shards(wc, "answers_shard"),
        check=lambda wc: llm_shards(wc, "answerer_check_shard"),
        pooled=lambda wc: llm_shards(wc, "pooled_shard"),
        accounting=lambda wc: llm_shards(wc, "judge_shard_accounting"),
    output:
        answers=artifact("answers"),
        check=artifact("answerer_check"),
        pooled=artifact("pooled"),
        accounting=artifact("judge_accounting"),
    log:
        "logs/{corpus}/gather_filter.log",
    params:
        shards=made_with(ANSWER_PARAMS),
