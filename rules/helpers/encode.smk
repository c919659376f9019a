# Helpers of rules/encode.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


def embedding_shards(wildcards):
    n_shards = corpus_entry(wildcards)["encoder"]["shards"]
    return [
        f"results/{wildcards.corpus}/embeddings/shard-{i}-of-{n_shards}.npy"
        for i in range(n_shards)
    ]
