# LLM stages (paper sections 4.2-4.4): atomic (simple, disjunctive) questions, AND/OR/NOT
# composition, the cyclic-consistency filter. Each job starts its own LLM session (for backend
# local, the embedded llama.cpp server inside the job) and holds one `llm_slots` unit, so the
# scheduler caps how many LLM jobs run at once. Every answer goes through the response cache.
# Each stage runs as `llm.shards` jobs (group g in shard g % n), gathered by a local rule.


# The params of each stage's shard jobs, which its gather job carries too (made_with).
ATOMIC_PARAMS = {
    "llm": lambda wc: llm_params(wc.kind),
    "seed": config["seed"],
    "prompt": lambda wc: prompt_params(wc.kind),
    "template": lambda wc: template_for(wc.kind),
    "generation": GENERATION_PARAMS,
    # simple: how passages without a usable title get a subject; disjunctive (kinds mode):
    # the question made of the shared kind
    "subject_prompt": lambda wc: (
        prompt_params("subject") if wc.kind == "simple" else None
    ),
    "kind_template": lambda wc: (
        TEMPLATES["disjunctive_kind"] if wc.kind == "disjunctive" else None
    ),
}
COMPOSE_PARAMS = {
    "llm": lambda wc: llm_params(wc.operator),
    "seed": config["seed"],
    "prompt": lambda wc: prompt_params(wc.operator),
    "template": lambda wc: template_for(wc.operator),
    "generation": GENERATION_PARAMS,
    "forms": lambda wc: TEMPLATES["not_kind"] if wc.operator == "not" else None,
}
ANSWER_PARAMS = {
    "llm": llm_params("filter"),
    "seed": config["seed"],
    "prompt": prompt_params(ANSWERER_STEP),
    "answerer": FILTER_PARAMS,
    "max_passage_words": config["generation"]["max_passage_words"],
}


rule atomic_questions:
    input:
        candidates="results/{corpus}/candidates.parquet",
    output:
        questions=temp(
            "results/{corpus}/shards/{kind}/shard-{shard}-of-{n_shards}.parquet"
        ),
        accounting=temp(
            "results/{corpus}/shards/{kind}/shard-{shard}-of-{n_shards}.json"
        ),
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
        unpack(compose_inputs),
    output:
        questions=temp(
            "results/{corpus}/shards/compose_{operator}/shard-{shard}-of-{n_shards}.parquet"
        ),
        accounting=temp(
            "results/{corpus}/shards/compose_{operator}/shard-{shard}-of-{n_shards}.json"
        ),
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


rule filter_questions:
    input:
        questions=expand(
            "results/{{corpus}}/questions/{operator}.parquet", operator=OPERATORS
        ),
        simple="results/{corpus}/questions/simple.parquet",
        disjunctive="results/{corpus}/questions/disjunctive.parquet",
        candidates="results/{corpus}/candidates.parquet",
    output:
        answers=temp(
            "results/{corpus}/shards/filter/shard-{shard}-of-{n_shards}.parquet"
        ),
        check=temp(
            "results/{corpus}/shards/answerer_check/shard-{shard}-of-{n_shards}.parquet"
        ),
        accounting=temp(
            "results/{corpus}/shards/filter/shard-{shard}-of-{n_shards}.json"
        ),
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
        "../workflow_scripts/filter_questions.py"


# Gathering: one file per stage, the same for every shard count (see steps.gather_shards).
# Local rules: they only concatenate, and on a cluster would otherwise wait in the queue.
# Each carries its shards' params (made_with, in common.smk says why).


rule gather_atomic_questions:
    input:
        shards=lambda wc: llm_shards(wc, wc.kind, "parquet"),
        accounting=lambda wc: llm_shards(wc, wc.kind, "json"),
    output:
        questions="results/{corpus}/questions/{kind}.parquet",
        accounting="results/{corpus}/llm_accounting/{kind}.json",
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


rule gather_composed_questions:
    input:
        shards=lambda wc: llm_shards(wc, f"compose_{wc.operator}", "parquet"),
        accounting=lambda wc: llm_shards(wc, f"compose_{wc.operator}", "json"),
    output:
        questions="results/{corpus}/questions/{operator}.parquet",
        accounting="results/{corpus}/llm_accounting/compose_{operator}.json",
    log:
        "logs/{corpus}/gather_compose_{operator}.log",
    priority: GENERATION_PRIORITY
    localrule: True
    conda:
        "../envs/llm.yaml"
    params:
        shards=made_with(COMPOSE_PARAMS),
    script:
        "../workflow_scripts/gather_stage.py"


rule gather_answers:
    input:
        shards=lambda wc: llm_shards(wc, "filter", "parquet"),
        checks=lambda wc: llm_shards(wc, "answerer_check", "parquet"),
        accounting=lambda wc: llm_shards(wc, "filter", "json"),
    output:
        answers="results/{corpus}/questions/answers.parquet",
        check="results/{corpus}/questions/answerer_check.parquet",
        accounting="results/{corpus}/llm_accounting/filter.json",
    log:
        "logs/{corpus}/gather_filter.log",
    priority: GENERATION_PRIORITY
    localrule: True
    conda:
        "../envs/llm.yaml"
    params:
        shards=made_with(ANSWER_PARAMS),
    script:
        "../workflow_scripts/gather_stage.py"
