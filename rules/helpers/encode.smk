# Helpers of rules/encode.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


def model_shards(wildcards):
    n_shards = model_entry(wildcards)["shards"]
    return [
        artifact(
            "embedding_shard", **dict(wildcards.items()), shard=i, n_shards=n_shards
        )
        for i in range(n_shards)
    ]


def encoding_priority(wildcards):
    return GENERATION_PRIORITY if wildcards.model == CLUSTERING_ENCODER else 0
