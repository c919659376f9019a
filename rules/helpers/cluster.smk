# Helpers of rules/cluster.smk only: input functions and params (kept apart from rules,
# as snakemake --lint asks; helpers several rule files share are in rules/common.smk).


def clustering_params(wildcards):
    settings = corpus_entry(wildcards)["clustering"]
    return {
        k: v
        for k, v in settings.items()
        if k not in ("sample_size", "svd_components", "assign")
    }
