# LLM stages (paper sections 4.2-4.4). Each job starts its own LLM session (for backend local,
# the embedded llama.cpp server inside the job) and holds one `llm_slots` unit, so the
# scheduler caps how many LLM jobs run at once. Every answer goes through the response cache.


rule simple_questions:
    input:
        candidates="results/{corpus}/candidates.parquet",
    output:
        questions="results/{corpus}/questions/simple.parquet",
        accounting="results/{corpus}/llm_accounting/simple.json",
    log:
        "logs/{corpus}/simple_questions.log",
    benchmark:
        "benchmarks/{corpus}/simple_questions.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        llm_slots=1,
    params:
        llm=config["llm"],
        seed=config["seed"],
        prompt=lambda wc: prompt_params("simple"),
        template=lambda wc: template_for("simple"),
        generation=GENERATION_PARAMS,
    script:
        "../workflow_scripts/simple_questions.py"


rule disjunctive_questions:
    input:
        candidates="results/{corpus}/candidates.parquet",
    output:
        questions="results/{corpus}/questions/disjunctive.parquet",
        accounting="results/{corpus}/llm_accounting/disjunctive.json",
    log:
        "logs/{corpus}/disjunctive_questions.log",
    benchmark:
        "benchmarks/{corpus}/disjunctive_questions.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        llm_slots=1,
    params:
        llm=config["llm"],
        seed=config["seed"],
        prompt=lambda wc: prompt_params("disjunctive"),
        template=lambda wc: template_for("disjunctive"),
        generation=GENERATION_PARAMS,
    script:
        "../workflow_scripts/disjunctive_questions.py"


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
