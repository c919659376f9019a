include: "helpers/corpus.smk"


rule extract_pdf:
    input:
        pdfs=pdf_inputs,
    output:
        passages="results/{corpus}/pdf/passages.parquet",
        report="results/{corpus}/pdf/extraction_report.json",
    log:
        "logs/{corpus}/extract_pdf.log",
    benchmark:
        "benchmarks/{corpus}/extract_pdf.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/corpus.yaml"
    threads: 2
    params:
        path=lambda wc: corpus_entry(wc)["path"],
        extraction=lambda wc: corpus_entry(wc)["extraction"],
    script:
        "../workflow_scripts/extract_pdf.py"


rule extraction_quality:
    input:
        passages="results/{corpus}/pdf/passages.parquet",
    output:
        scores="results/{corpus}/pdf/extraction_quality.parquet",
        summary="results/{corpus}/pdf/extraction_quality.json",
    log:
        "logs/{corpus}/extraction_quality.log",
    conda:
        "../envs/corpus.yaml"
    params:
        path=lambda wc: corpus_entry(wc)["path"],
        reference=lambda wc: corpus_entry(wc)["reference"],
    script:
        "../workflow_scripts/extraction_quality.py"


rule ingest:
    input:
        unpack(source_inputs),
    output:
        corpus="results/{corpus}/corpus.parquet",
        queries="results/{corpus}/original_queries.parquet",
        qrels="results/{corpus}/original_qrels.parquet",
    log:
        "logs/{corpus}/ingest.log",
    benchmark:
        "benchmarks/{corpus}/ingest.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/corpus.yaml"
    params:
        source=source_params,
    script:
        "../workflow_scripts/ingest.py"
