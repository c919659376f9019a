# The HTML report (`snakemake --report report.html`): significance tests, figures, the LLM
# accounting, example questions and the config. Outputs marked with report() are what the
# report shows; captions live in report/*.rst (rendered with the job's params and wildcards).


include: "helpers/report.smk"


rule significance:
    input:
        scores=model_scores,
    output:
        tests=artifact("significance"),
        html=report(
            artifact("significance_html"),
            caption="../report/significance.rst",
            category="Retrieval",
            subcategory="{corpus}",
            labels={"result": "Paired significance tests"},
        ),
    log:
        "logs/{corpus}/significance.log",
    benchmark:
        "benchmarks/{corpus}/significance.tsv"
    conda:
        "../envs/report.yaml"
    params:
        models=lambda wc: corpus_models(wc.corpus),
        split=config["evaluation"]["table_split"],
        significance=config["evaluation"]["significance"],
        seed=config["seed"],
    script:
        "../workflow_scripts/significance.py"


rule figure:
    input:
        unpack(figure_inputs),
    output:
        png=artifact("figure_png"),
        svg=report(
            artifact("figure_svg"),
            caption="../report/figure.rst",
            category=lambda wc: FIGURES[wc.figure].category,
            subcategory="{corpus}",
            labels=lambda wc: {"result": FIGURES[wc.figure].title},
        ),
    log:
        "logs/{corpus}/figures/{figure}.log",
    conda:
        "../envs/report.yaml"
    params:
        settings=figure_settings,
        question=lambda wc: FIGURES[wc.figure].question,
    script:
        "../workflow_scripts/figure.py"


rule llm_accounting:
    input:
        unpack(llm_accounting_inputs),
    output:
        csv=artifact("llm_accounting_csv"),
        html=report(
            artifact("llm_accounting_html"),
            caption="../report/llm_accounting.rst",
            category="Run",
            subcategory="{corpus}",
            labels={"result": "LLM accounting"},
        ),
    log:
        "logs/{corpus}/llm_accounting.log",
    conda:
        "../envs/report.yaml"
    script:
        "../workflow_scripts/llm_accounting.py"


rule example_questions:
    input:
        all=artifact("all_questions"),
        corpus=artifact("corpus"),
        answers=artifact("answers"),
    output:
        report(
            artifact("examples"),
            caption="../report/examples.rst",
            category="Dataset",
            subcategory="{corpus}",
            labels={"result": "Example questions"},
        ),
    log:
        "logs/{corpus}/example_questions.log",
    conda:
        "../envs/report.yaml"
    params:
        settings=config["report"],
        seed=config["seed"],
    script:
        "../workflow_scripts/example_questions.py"


rule run_config:
    output:
        yaml=artifact("config_yaml"),
        html=report(
            artifact("config_html"),
            caption="../report/config.rst",
            category="Run",
            subcategory="{corpus}",
            labels={"result": "Config"},
        ),
    log:
        "logs/{corpus}/run_config.log",
    conda:
        "../envs/report.yaml"
    params:
        config=lambda wc: corpus_config(config, wc.corpus),
    script:
        "../workflow_scripts/run_config.py"


rule rankings:
    input:
        questions=artifact("dataset"),
        corpus=artifact("corpus"),
        runs=lambda wc: [
            artifact("run", corpus=wc.corpus, model=model)
            for model in corpus_models(wc.corpus)
        ],
    output:
        report(
            artifact("rankings"),
            caption="../report/rankings.rst",
            category="Retrieval",
            subcategory="{corpus}",
            labels={"result": "Rankings per question"},
        ),
    log:
        "logs/{corpus}/rankings.log",
    conda:
        "../envs/report.yaml"
    params:
        models=lambda wc: corpus_models(wc.corpus),
        settings=config["report"],
    script:
        "../workflow_scripts/rankings.py"
