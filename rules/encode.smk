include: "helpers/encode.smk"


rule encode_shard:
    input:
        corpus="results/{corpus}/corpus.parquet",
    output:
        temp("results/{corpus}/embeddings/shard-{shard}-of-{n_shards}.npy"),
    log:
        "logs/{corpus}/encode_shard-{shard}-of-{n_shards}.log",
    benchmark:
        "benchmarks/{corpus}/encode_shard-{shard}-of-{n_shards}.tsv"
    priority: GENERATION_PRIORITY
    conda:
        "../envs/encode.yaml"
    threads: 2
    params:
        encoder=encoder_params,
    script:
        "../workflow_scripts/encode_shard.py"


rule gather_embeddings:
    input:
        shards=embedding_shards,
        corpus="results/{corpus}/corpus.parquet",
    output:
        embeddings="results/{corpus}/embeddings.npy",
        pids="results/{corpus}/embeddings.pids.parquet",
    log:
        "logs/{corpus}/gather_embeddings.log",
    priority: GENERATION_PRIORITY
    conda:
        "../envs/encode.yaml"
    params:
        encoder=encoder_params,
    script:
        "../workflow_scripts/gather_embeddings.py"
