import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.encoders import encode_shard
from boolbench.workflow import model_spec, script_context

# Every model's encoding, the clustering encoder's included.
with script_context(snakemake):
    encode_shard(
        snakemake.input.corpus,
        shard=int(snakemake.wildcards.shard),
        n_shards=int(snakemake.wildcards.n_shards),
        spec=model_spec(snakemake, snakemake.wildcards.model),
        out_path=snakemake.output[0],
        threads=snakemake.threads,
        passage_template=snakemake.params.model.get("passage_template", "{text}"),
    )
