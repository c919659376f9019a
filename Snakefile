# boolbench: regenerate the BoolQuestions benchmark (see README.md for the pipeline).
# Run from this folder: `snakemake --cores all` (profiles/default is picked up automatically).
# `--configfile my.yaml` replaces config.yaml entirely instead of being merged into it.


include: "rules/common.smk"
include: "rules/corpus.smk"
include: "rules/encode.smk"
include: "rules/cluster.smk"
include: "rules/candidates.smk"


rule all:
    default_target: True
    input:
        expand("results/{corpus}/candidates.parquet", corpus=CORPORA),
