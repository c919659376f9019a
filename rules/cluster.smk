include: "helpers/cluster.smk"


rule reduce:
    input:
        embeddings=artifact("embeddings", model=CLUSTERING_ENCODER),
        pids=artifact("embedding_pids", model=CLUSTERING_ENCODER),
    output:
        svd=artifact("svd"),
        variance=artifact("svd_variance"),
        components=artifact("svd_components"),
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
        svd=artifact("svd"),
        variance=artifact("svd_variance"),
    output:
        clusters=artifact("clusters"),
        report=artifact("clustering_report"),
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
        embeddings=artifact("embeddings", model=CLUSTERING_ENCODER),
        pids=artifact("embedding_pids", model=CLUSTERING_ENCODER),
        components=artifact("svd_components"),
        svd=artifact("svd"),
        clusters=artifact("clusters"),
    output:
        artifact("corpus_clusters"),
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
        corpus=artifact("corpus"),
    output:
        groups=artifact("document_groups"),
        report=artifact("document_groups_report"),
    log:
        "logs/{corpus}/group_by_document.log",
    priority: GENERATION_PRIORITY
    conda:
        "../envs/corpus.yaml"
    params:
        window=lambda wc: corpus_entry(wc)["document_grouping"]["window"],
    script:
        "../workflow_scripts/group_by_document.py"
