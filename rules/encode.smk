# Encoding (paper section 3): the corpus's passage vectors, for the clustering encoder (the
# `encoder` section, model CLUSTERING_ENCODER) and for every dense model of the registry, in
# `shards` jobs gathered into one file. A model whose encoding parameters equal the clustering
# encoder's reuses its vectors (model_embeddings) and has no jobs here.


include: "helpers/encode.smk"


rule encode_shard:
    input:
        corpus=artifact("corpus"),
        trained=trained_model_input,
    output:
        temp(artifact("embedding_shard")),
    log:
        "logs/{corpus}/models/{model}/encode_shard-{shard}-of-{n_shards}.log",
    benchmark:
        "benchmarks/{corpus}/models/{model}/encode_shard-{shard}-of-{n_shards}.tsv"
    wildcard_constraints:
        model=ENCODED_MODELS,
    # The clustering encoder is on the way to the LLM stages; the models' encodings are not.
    priority: encoding_priority
    conda:
        "../envs/encode.yaml"
    threads: 2
    params:
        model=model_encoding,
    script:
        "../workflow_scripts/encode_shard.py"


rule gather_embeddings:
    input:
        shards=model_shards,
        corpus=artifact("corpus"),
    output:
        embeddings=artifact("embeddings"),
        pids=artifact("embedding_pids"),
    log:
        "logs/{corpus}/models/{model}/gather_embeddings.log",
    wildcard_constraints:
        model=ENCODED_MODELS,
    priority: encoding_priority
    conda:
        "../envs/encode.yaml"
    params:
        encoder=model_encoding,
    script:
        "../workflow_scripts/gather_embeddings.py"
