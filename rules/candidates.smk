include: "helpers/candidates.smk"


rule sample_candidates:
    input:
        unpack(candidate_inputs),
    output:
        artifact("candidates"),
    log:
        "logs/{corpus}/sample_candidates.log",
    priority: GENERATION_PRIORITY
    conda:
        "../envs/corpus.yaml"
    params:
        n_groups=lambda wc: corpus_entry(wc)["candidates"]["n_groups"],
        sizes=lambda wc: corpus_entry(wc)["candidates"]["sizes"],
        skip_loosest=lambda wc: corpus_entry(wc)["candidates"]["skip_loosest"],
        seed=config["seed"],
        genre=lambda wc: corpus_entry(wc)["genre"],
        source=lambda wc: corpus_entry(wc)["source"],
        grouping=lambda wc: corpus_entry(wc)["grouping"],
    script:
        "../workflow_scripts/sample_candidates.py"
