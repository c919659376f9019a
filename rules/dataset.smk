include: "helpers/dataset.smk"


rule assemble_dataset:
    input:
        questions=expand(
            artifact("composed_questions"), operator=OPERATORS, allow_missing=True
        ),
        answers=artifact("answers"),
        pooled=artifact("pooled"),
    output:
        all=artifact("all_questions"),
        kept=artifact("dataset"),
    log:
        "logs/{corpus}/assemble_dataset.log",
    wildcard_constraints:
        corpus=GENERATED_CORPORA,
    priority: GENERATION_PRIORITY
    conda:
        "../envs/corpus.yaml"
    params:
        mode=config["filter"]["mode"],
    script:
        "../workflow_scripts/assemble_dataset.py"


rule dataset_statistics:
    input:
        all=artifact("all_questions"),
        simple=artifact("atomic_questions", kind="simple"),
        disjunctive=artifact("atomic_questions", kind="disjunctive"),
        check=artifact("answerer_check"),
    output:
        csv=artifact("table1_csv"),
        md=artifact("table1_md"),
        html=report(
            artifact("table1_html"),
            caption="../report/table1.rst",
            category="Dataset",
            subcategory="{corpus}",
            labels={"result": "Table 1: dataset statistics"},
        ),
        report=artifact("generation_report"),
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
        kept=artifact("dataset"),
        corpus=artifact("corpus"),
    output:
        corpus=artifact("beir_corpus"),
        queries=artifact("beir_queries"),
        test=artifact("beir_qrels_test"),
        train=artifact("beir_qrels_train"),
        test_group=artifact("beir_qrels_test_group"),
        train_group=artifact("beir_qrels_train_group"),
        test_negatives=artifact("beir_qrels_test_negatives"),
        train_negatives=artifact("beir_qrels_train_negatives"),
        card=artifact("beir_card"),
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
        corpus=artifact("corpus"),
    output:
        artifact("dataset"),
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
        questions=artifact("dataset"),
    output:
        csv=artifact("table1_csv"),
        md=artifact("table1_md"),
        html=report(
            artifact("table1_html"),
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
        questions=artifact("dataset"),
        corpus=artifact("corpus"),
    output:
        eval=artifact("released_eval"),
        corpus=artifact("released_corpus"),
        card=artifact("released_card"),
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
        questions=artifact("dataset"),
        corpus=artifact("corpus"),
        runs=audit_runs,
    output:
        csv=artifact("audit_sheet"),
        key=artifact("audit_key"),
        html=report(
            artifact("audit_sheet_html"),
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
        sheet=artifact("audit_sheet"),
    output:
        judgements=artifact("audit_llm_judgements"),
        accounting=artifact("audit_accounting"),
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
        csv=artifact("audit_confusion"),
        by_model=artifact("audit_by_model"),
        html=report(
            artifact("audit_confusion_html"),
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
