include: "helpers/cluster.smk"


rule reduce:
    input:
        embeddings="results/{corpus}/models/clustering-encoder/embeddings.npy",
        pids="results/{corpus}/models/clustering-encoder/embeddings.pids.parquet",
    output:
        svd="results/{corpus}/svd.parquet",
        variance="results/{corpus}/svd_variance.parquet",
        components="results/{corpus}/svd_components.npy",
    log:
        "logs/{corpus}/reduce.log",
    benchmark:
        "benchmarks/{corpus}/reduce.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/cluster.yaml"
    params:
        sample_size=lambda wc: corpus_entry(wc)["clustering"]["sample_size"],
        svd_components=lambda wc: corpus_entry(wc)["clustering"]["svd_components"],
        seed=config["seed"],
    script:
        "../workflow_scripts/reduce.py"


rule cluster:
    input:
        svd="results/{corpus}/svd.parquet",
        variance="results/{corpus}/svd_variance.parquet",
    output:
        clusters="results/{corpus}/clusters.parquet",
        report="results/{corpus}/clustering_report.json",
    log:
        "logs/{corpus}/cluster.log",
    benchmark:
        "benchmarks/{corpus}/cluster.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/cluster.yaml"
    params:
        clustering=clustering_params,
    script:
        "../workflow_scripts/cluster.py"


rule assign_clusters:
    input:
        embeddings="results/{corpus}/models/clustering-encoder/embeddings.npy",
        pids="results/{corpus}/models/clustering-encoder/embeddings.pids.parquet",
        components="results/{corpus}/svd_components.npy",
        svd="results/{corpus}/svd.parquet",
        clusters="results/{corpus}/clusters.parquet",
    output:
        "results/{corpus}/corpus_clusters.parquet",
    log:
        "logs/{corpus}/assign_clusters.log",
    benchmark:
        "benchmarks/{corpus}/assign_clusters.tsv"
    conda:
        "../envs/cluster.yaml"
    params:
        metric=lambda wc: corpus_entry(wc)["clustering"]["metric"],
    script:
        "../workflow_scripts/assign_clusters.py"


rule group_by_document:
    input:
        corpus="results/{corpus}/corpus.parquet",
    output:
        groups="results/{corpus}/document_groups.parquet",
        report="results/{corpus}/document_groups_report.json",
    log:
        "logs/{corpus}/group_by_document.log",
    priority: GENERATION_PRIORITY
    conda:
        "../envs/corpus.yaml"
    params:
        window=lambda wc: corpus_entry(wc)["document_grouping"]["window"],
    script:
        "../workflow_scripts/group_by_document.py"
