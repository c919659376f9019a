# The paper's baselines (section 6.3, Table 3): Boolean operations on decomposed questions (an
# LLM's decomposition and, as an upper bound, the expression recorded at generation), and
# Boolean contrastive continual training of the retriever. The trained models are evaluated
# by the rules of evaluate.smk under the names contrastive-{subset} (trained on the query
# side only, by default, they search the retriever's own passage vectors and index).


include: "helpers/baselines.smk"


# The params of the decomposition's shard jobs, which its gather job carries too (made_with).
DECOMPOSE_PARAMS = {
    "llm": llm_params("decompose"),
    "seed": config["seed"],
    "prompt": prompt_params("decompose"),
    "split": BASELINES["split"],
    "decompose": BASELINES["decompose"],
}


rule decompose_questions:
    input:
        questions=artifact("dataset"),
    output:
        decomposed=temp(artifact("decompose_shard")),
        accounting=temp(artifact("decompose_shard_accounting")),
    log:
        "logs/{corpus}/decompose_questions/shard-{shard}-of-{n_shards}.log",
    benchmark:
        "benchmarks/{corpus}/decompose_questions/shard-{shard}-of-{n_shards}.tsv"
    conda:
        "../envs/llm.yaml"
    threads: 2
    resources:
        llm_slots=1,
    params:
        **DECOMPOSE_PARAMS,
    script:
        "../workflow_scripts/decompose_questions.py"


# The gathering of generate.smk, with the decomposition's files (and no priority: it is not on
# the way to the dataset).
use rule gather_atomic_questions as gather_decomposed_questions with:
    input:
        decomposed=lambda wc: llm_shards(wc, "decompose_shard"),
        accounting=lambda wc: llm_shards(wc, "decompose_shard_accounting"),
    output:
        decomposed=artifact("decomposed"),
        accounting=artifact("decompose_accounting"),
    log:
        "logs/{corpus}/gather_decompose.log",
    priority: 0
    params:
        shards=made_with(DECOMPOSE_PARAMS),


rule boolean_operation_run:
    input:
        unpack(baseline_run_inputs),
    output:
        artifact("baseline_run"),
    log:
        "logs/{corpus}/baselines/{method}_run.log",
    benchmark:
        "benchmarks/{corpus}/baselines/{method}_run.tsv"
    conda:
        "../envs/retrieve.yaml"
    threads: 2
    params:
        retriever=lambda wc: retriever_of(wc.corpus),
        model=baseline_retriever_params,
        split=BASELINES["split"],
        k=BASELINES["k"],
        depth=config["evaluation"]["depth"],
    script:
        "../workflow_scripts/boolean_operation_run.py"


rule train_contrastive:
    input:
        unpack(training_inputs),
    output:
        directory(artifact("contrastive_model")),
    log:
        "logs/{corpus}/baselines/train_contrastive-{subset}.log",
    benchmark:
        "benchmarks/{corpus}/baselines/train_contrastive-{subset}.tsv"
    conda:
        "../envs/retrieve.yaml"
    threads: 2
    params:
        model=baseline_retriever_params,
        training=BASELINES["training"],
        seed=config["seed"],
    script:
        "../workflow_scripts/train_contrastive.py"


rule table3:
    input:
        unpack(table3_inputs),
    output:
        csv=artifact("table3_csv"),
        md=artifact("table3_md"),
        tex=artifact("table3_tex"),
        html=report(
            artifact("table3_html"),
            caption="../report/table3.rst",
            category="Baselines",
            subcategory="{corpus}",
            labels={"result": "Table 3: baselines"},
        ),
    log:
        "logs/{corpus}/table3.log",
    conda:
        "../envs/retrieve.yaml"
    params:
        retriever=lambda wc: retriever_of(wc.corpus),
        trained=lambda wc: trained_models_of(wc.corpus),
        split=BASELINES["split"],
        not_computed=not_computed,
        training_side=BASELINES["training"]["side"],
    script:
        "../workflow_scripts/table3.py"
