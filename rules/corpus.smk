include: "helpers/corpus.smk"


rule extract_pdf:
    input:
        pdfs=pdf_inputs,
    output:
        passages=artifact("pdf_passages"),
        report=artifact("pdf_report"),
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
        passages=artifact("pdf_passages"),
    output:
        scores=artifact("extraction_quality"),
        summary=artifact("extraction_quality_summary"),
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
        corpus=artifact("corpus"),
        queries=artifact("original_queries"),
        qrels=artifact("original_qrels"),
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
