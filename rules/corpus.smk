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
    conda:
        "../envs/corpus.yaml"
    params:
        source=source_params,
    script:
        "../workflow_scripts/ingest.py"
