# LLM stages (paper sections 4.2-4.4): atomic (simple, disjunctive) questions, AND/OR/NOT
# composition, the cyclic-consistency filter. Each job starts its own LLM session (for backend
# local, the embedded llama.cpp server inside the job) and holds one `llm_slots` unit, so the
# scheduler caps how many LLM jobs run at once. Every answer goes through the response cache.


rule atomic_questions:
    input:
        candidates="results/{corpus}/candidates.parquet",
    output:
        questions="results/{corpus}/questions/{kind}.parquet",
        accounting="results/{corpus}/llm_accounting/{kind}.json",
    log:
        "logs/{corpus}/{kind}_questions.log",
    benchmark:
        "benchmarks/{corpus}/{kind}_questions.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        llm_slots=1,
    params:
        llm=config["llm"],
        seed=config["seed"],
        prompt=lambda wc: prompt_params(wc.kind),
        template=lambda wc: template_for(wc.kind),
        generation=GENERATION_PARAMS,
    script:
        "../workflow_scripts/atomic_questions.py"


rule compose_questions:
    input:
        unpack(compose_inputs),
    output:
        questions="results/{corpus}/questions/{operator}.parquet",
        accounting="results/{corpus}/llm_accounting/compose_{operator}.json",
    log:
        "logs/{corpus}/compose_{operator}.log",
    benchmark:
        "benchmarks/{corpus}/compose_{operator}.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        llm_slots=1,
    params:
        llm=config["llm"],
        seed=config["seed"],
        prompt=lambda wc: prompt_params(wc.operator),
        template=lambda wc: template_for(wc.operator),
        generation=GENERATION_PARAMS,
    script:
        "../workflow_scripts/compose_questions.py"


rule filter_questions:
    input:
        questions="results/{corpus}/questions/{operator}.parquet",
        candidates="results/{corpus}/candidates.parquet",
    output:
        answers="results/{corpus}/questions/{operator}_answers.parquet",
        accounting="results/{corpus}/llm_accounting/filter_{operator}.json",
    log:
        "logs/{corpus}/filter_{operator}.log",
    benchmark:
        "benchmarks/{corpus}/filter_{operator}.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        llm_slots=1,
    params:
        llm=config["llm"],
        seed=config["seed"],
        prompt=lambda wc: prompt_params("answerer"),
        answer_max_tokens=config["filter"]["answer_max_tokens"],
        temperature=config["filter"]["temperature"],
        max_passage_words=config["generation"]["max_passage_words"],
    script:
        "../workflow_scripts/filter_questions.py"
