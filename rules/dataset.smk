include: "helpers/dataset.smk"


rule assemble_dataset:
    input:
        questions=expand(
            "results/{{corpus}}/questions/{operator}.parquet", operator=OPERATORS
        ),
        answers="results/{corpus}/questions/answers.parquet",
        pooled="results/{corpus}/questions/pooled.parquet",
    output:
        all="results/{corpus}/boolquestions_all.parquet",
        kept="results/{corpus}/boolquestions.parquet",
    log:
        "logs/{corpus}/assemble_dataset.log",
    wildcard_constraints:
        corpus=GENERATED_CORPORA,
    priority: GENERATION_PRIORITY
    conda:
        "../envs/corpus.yaml"
    params:
        mode=config["filter"]["mode"],
        train_fraction=config["split"]["train_fraction"],
        seed=config["seed"],
    script:
        "../workflow_scripts/assemble_dataset.py"


rule dataset_statistics:
    input:
        all="results/{corpus}/boolquestions_all.parquet",
        simple="results/{corpus}/questions/simple.parquet",
        disjunctive="results/{corpus}/questions/disjunctive.parquet",
        check="results/{corpus}/questions/answerer_check.parquet",
    output:
        csv="results/{corpus}/tables/table1.csv",
        md="results/{corpus}/tables/table1.md",
        html=report(
            "results/{corpus}/tables/table1.html",
            caption="../report/table1.rst",
            category="Dataset",
            subcategory="{corpus}",
            labels={"result": "Table 1: dataset statistics"},
        ),
        report="results/{corpus}/generation_report.json",
    log:
        "logs/{corpus}/dataset_statistics.log",
    wildcard_constraints:
        corpus=GENERATED_CORPORA,
    conda:
        "../envs/corpus.yaml"
    script:
        "../workflow_scripts/dataset_statistics.py"


rule export_beir:
    input:
        kept="results/{corpus}/boolquestions.parquet",
        corpus="results/{corpus}/corpus.parquet",
    output:
        corpus="results/{corpus}/beir/corpus.jsonl",
        queries="results/{corpus}/beir/queries.jsonl",
        test="results/{corpus}/beir/qrels/test.tsv",
        train="results/{corpus}/beir/qrels/train.tsv",
        test_group="results/{corpus}/beir/qrels/test_group.tsv",
        train_group="results/{corpus}/beir/qrels/train_group.tsv",
        test_negatives="results/{corpus}/beir/qrels/test_negatives.tsv",
        train_negatives="results/{corpus}/beir/qrels/train_negatives.tsv",
        card="results/{corpus}/beir/README.md",
    log:
        "logs/{corpus}/export_beir.log",
    conda:
        "../envs/corpus.yaml"
    params:
        card=card_params,
    script:
        "../workflow_scripts/export_beir.py"


# A corpus with `questions:` reads its questions from that file instead of generating them.
rule import_questions:
    input:
        questions=questions_inputs,
        corpus="results/{corpus}/corpus.parquet",
    output:
        "results/{corpus}/boolquestions.parquet",
    log:
        "logs/{corpus}/import_questions.log",
    wildcard_constraints:
        corpus=IMPORTED_CORPORA,
    conda:
        "../envs/corpus.yaml"
    params:
        path=lambda wc: IMPORTED[wc.corpus],
    script:
        "../workflow_scripts/import_questions.py"


rule question_statistics:
    input:
        questions="results/{corpus}/boolquestions.parquet",
    output:
        csv="results/{corpus}/tables/table1.csv",
        md="results/{corpus}/tables/table1.md",
        html=report(
            "results/{corpus}/tables/table1.html",
            caption="../report/table1_imported.rst",
            category="Dataset",
            subcategory="{corpus}",
            labels={"result": "Table 1: dataset statistics"},
        ),
    log:
        "logs/{corpus}/question_statistics.log",
    wildcard_constraints:
        corpus=IMPORTED_CORPORA,
    conda:
        "../envs/corpus.yaml"
    script:
        "../workflow_scripts/question_statistics.py"


# The dataset in the released BoolQuestions layout, for code written for the released files.
rule export_released:
    input:
        questions="results/{corpus}/boolquestions.parquet",
        corpus="results/{corpus}/corpus.parquet",
    output:
        eval="results/{corpus}/released/eval.jsonl",
        corpus="results/{corpus}/released/corpus.jsonl",
        card="results/{corpus}/released/README.md",
    log:
        "logs/{corpus}/export_released.log",
    conda:
        "../envs/corpus.yaml"
    params:
        card=card_params,
    script:
        "../workflow_scripts/export_released.py"


# The label audit (paper section 4.4): a blind sheet from every run (labelled passages and each
# model's top audit.depth); judged by people (audit.judgements) or an LLM (audit.judge), the
# judgements set against the key's labels.
rule audit_sheet:
    input:
        questions="results/{corpus}/boolquestions.parquet",
        corpus="results/{corpus}/corpus.parquet",
        runs=audit_runs,
    output:
        csv="results/{corpus}/audit/sheet.csv",
        key="results/{corpus}/audit/key.csv",
        html=report(
            "results/{corpus}/audit/sheet.html",
            caption="../report/audit_sheet.rst",
            category="Dataset",
            subcategory="{corpus}",
            labels={"result": "Label audit sheet"},
        ),
    log:
        "logs/{corpus}/audit_sheet.log",
    conda:
        "../envs/corpus.yaml"
    params:
        models=lambda wc: corpus_models(wc.corpus),
        questions=config["audit"]["questions"],
        depth=config["audit"]["depth"],
        seed=config["seed"],
    script:
        "../workflow_scripts/audit_sheet.py"


rule audit_judge:
    input:
        sheet="results/{corpus}/audit/sheet.csv",
    output:
        judgements="results/{corpus}/audit/llm_judgements.csv",
        accounting="results/{corpus}/llm_accounting/audit.json",
    log:
        "logs/{corpus}/audit_judge.log",
    benchmark:
        "benchmarks/{corpus}/audit_judge.tsv"
    conda:
        "../envs/llm.yaml"
    resources:
        llm_slots=1,
    params:
        llm=llm_params("audit"),
        seed=config["seed"],
        prompts=AUDIT_PROMPTS,
        answerer=FILTER_PARAMS,
        max_passage_words=config["generation"]["max_passage_words"],
    script:
        "../workflow_scripts/audit_judge.py"


rule audit_confusion:
    input:
        unpack(audit_judgements),
    output:
        csv="results/{corpus}/audit/confusion.csv",
        by_model="results/{corpus}/audit/by_model.csv",
        html=report(
            "results/{corpus}/audit/confusion.html",
            caption="../report/audit_confusion.rst",
            category="Dataset",
            subcategory="{corpus}",
            labels={"result": "Label audit"},
        ),
    log:
        "logs/{corpus}/audit_confusion.log",
    conda:
        "../envs/corpus.yaml"
    params:
        source=audit_source(config),
        depth=config["audit"]["depth"],
    script:
        "../workflow_scripts/audit_confusion.py"
