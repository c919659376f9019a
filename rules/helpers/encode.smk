# Helpers of rules/encode.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


def model_shards(wildcards):
    n_shards = model_entry(wildcards)["shards"]
    base = f"results/{wildcards.corpus}/models/{wildcards.model}"
    return [f"{base}/shard-{i}-of-{n_shards}.npy" for i in range(n_shards)]


def encoding_priority(wildcards):
    return GENERATION_PRIORITY if wildcards.model == CLUSTERING_ENCODER else 0
