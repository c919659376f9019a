# Retrieval evaluation (paper section 6): every model of the `models:` registry encodes or
# indexes the corpus, searches the questions and the original queries, and is scored; Table 2
# gathers the models. Adding a model adds only its own jobs (and rebuilds the table).
# Queries about one document are also ranked within it (runs/document/): the DRC paper's
# Recall@k% (tables/document_recall.*).


include: "helpers/evaluate.smk"


rule build_faiss_index:
    input:
        unpack(model_embeddings),
    output:
        artifact("faiss_index"),
    log:
        "logs/{corpus}/models/{model}/build_index.log",
    benchmark:
        "benchmarks/{corpus}/models/{model}/build_index.tsv"
    wildcard_constraints:
        model=DENSE_MODELS,
    conda:
        "../envs/retrieve.yaml"
    threads: 2
    params:
        model=lambda wc: model_encoding(wc)
        | {k: model_entry(wc)[k] for k in ("similarity", "index")},
        seed=config["seed"],
    script:
        "../workflow_scripts/build_faiss_index.py"


rule build_bm25_index:
    input:
        corpus=artifact("corpus"),
    output:
        directory(artifact("bm25_index")),
    log:
        "logs/{corpus}/models/{model}/build_index.log",
    benchmark:
        "benchmarks/{corpus}/models/{model}/build_index.tsv"
    wildcard_constraints:
        model=BM25_MODELS,
    conda:
        "../envs/retrieve.yaml"
    params:
        model=lambda wc: {
            k: model_entry(wc)[k] for k in ("kind", "k1", "b", "stopwords", "stemmer")
        }
        | passage_template_param(wc),
    script:
        "../workflow_scripts/build_bm25_index.py"


rule search:
    input:
        unpack(search_inputs),
    output:
        **RUN_OUTPUTS,
    log:
        "logs/{corpus}/models/{model}/search.log",
    benchmark:
        "benchmarks/{corpus}/models/{model}/search.tsv"
    wildcard_constraints:
        model=FIRST_STAGE_MODELS,
    conda:
        "../envs/retrieve.yaml"
    threads: 2
    params:
        model=model_search_params,
        depth=config["evaluation"]["depth"],
        min_document_passages=config["evaluation"]["document_recall"][
            "min_document_passages"
        ],
    script:
        "../workflow_scripts/search.py"


rule rerank:
    input:
        unpack(rerank_inputs),
    output:
        **RUN_OUTPUTS,
    log:
        "logs/{corpus}/models/{model}/rerank.log",
    benchmark:
        "benchmarks/{corpus}/models/{model}/rerank.tsv"
    wildcard_constraints:
        model=RERANKERS,
    conda:
        "../envs/retrieve.yaml"
    threads: 2
    params:
        model=model_search_params,
        depth=rerank_depth,
    script:
        "../workflow_scripts/rerank.py"


rule score_model:
    input:
        run=artifact("run"),
        original=artifact("original_run"),
        document=artifact("document_run"),
        document_original=artifact("original_document_run"),
        questions=artifact("dataset"),
        qrels=artifact("original_qrels"),
        corpus=artifact("corpus"),
    output:
        artifact("scores"),
    log:
        "logs/{corpus}/models/{model}/score.log",
    conda:
        "../envs/retrieve.yaml"
    params:
        document_recall=config["evaluation"]["document_recall"],
    script:
        "../workflow_scripts/score_model.py"


rule evaluation_tables:
    input:
        scores=model_scores,
        significance=artifact("significance"),
        questions=artifact("dataset"),
    output:
        metrics=artifact("metrics"),
        csv=artifact("table2_csv"),
        md=artifact("table2_md"),
        tex=artifact("table2_tex"),
        html=report(
            artifact("table2_html"),
            caption="../report/table2.rst",
            category="Retrieval",
            subcategory="{corpus}",
            labels={"result": "Table 2: retrieval"},
        ),
        provenance_md=artifact("provenance_md"),
        provenance_html=report(
            artifact("provenance_html"),
            caption="../report/provenance.rst",
            category="Retrieval",
            subcategory="{corpus}",
            labels={"result": "Model provenance"},
        ),
    log:
        "logs/{corpus}/evaluation_tables.log",
    conda:
        "../envs/retrieve.yaml"
    params:
        models=lambda wc: corpus_models(wc.corpus),
        split=config["evaluation"]["table_split"],
        alpha=config["evaluation"]["significance"]["alpha"],
    script:
        "../workflow_scripts/evaluation_tables.py"


rule document_recall_table:
    input:
        metrics=artifact("metrics"),
    output:
        csv=artifact("document_recall_csv"),
        md=artifact("document_recall_md"),
        html=report(
            artifact("document_recall_html"),
            caption="../report/document_recall.rst",
            category="Retrieval",
            subcategory="{corpus}",
            labels={"result": "Document-scoped recall"},
        ),
    log:
        "logs/{corpus}/document_recall_table.log",
    conda:
        "../envs/retrieve.yaml"
    params:
        models=lambda wc: corpus_models(wc.corpus),
        split=config["evaluation"]["table_split"],
        document_recall=config["evaluation"]["document_recall"],
    script:
        "../workflow_scripts/document_recall_table.py"


# Interchange: TREC runs beside the Parquet runs (the dataset's questions only; ties made
# impossible, so every IR tool ranks as the rank column does) and TREC qrels of the questions
# (completed labels, group labels, construction negatives) and the original queries.
rule trec_runs:
    input:
        run=artifact("run"),
        original=artifact("original_run"),
        questions=artifact("dataset"),
    output:
        run=artifact("trec_run"),
        original=artifact("original_trec_run"),
    log:
        "logs/{corpus}/models/{model}/trec_runs.log",
    conda:
        "../envs/retrieve.yaml"
    script:
        "../workflow_scripts/trec_runs.py"


rule trec_qrels:
    input:
        questions=artifact("dataset"),
        qrels=artifact("original_qrels"),
    output:
        completed=artifact("trec_qrels"),
        group=artifact("trec_qrels_group"),
        negatives=artifact("trec_qrels_negatives"),
        original=artifact("trec_qrels_original"),
    log:
        "logs/{corpus}/trec_qrels.log",
    conda:
        "../envs/retrieve.yaml"
    script:
        "../workflow_scripts/trec_qrels.py"
