import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.embeddings import EncoderSettings, encode_shard
from boolbench.workflow import script_context

with script_context(snakemake):
    encode_shard(
        snakemake.input.corpus,
        shard=int(snakemake.wildcards.shard),
        n_shards=int(snakemake.wildcards.n_shards),
        settings=EncoderSettings.from_config(snakemake.params.encoder),
        out_path=snakemake.output[0],
        threads=snakemake.threads,
    )
