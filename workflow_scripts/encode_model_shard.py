import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.dense import encode_model_shard
from boolbench.retrievers import ModelSpec
from boolbench.workflow import script_context

with script_context(snakemake):
    encode_model_shard(
        snakemake.input.corpus,
        shard=int(snakemake.wildcards.shard),
        n_shards=int(snakemake.wildcards.n_shards),
        spec=ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        out_path=snakemake.output[0],
        threads=snakemake.threads,
    )
