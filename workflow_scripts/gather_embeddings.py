import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.embeddings import gather_shards
from boolbench.workflow import script_context

# Every model's shards, the clustering encoder's included: params.encoder is the settings that
# produced the vectors, stored beside them.
with script_context(snakemake):
    gather_shards(
        list(snakemake.input.shards),
        snakemake.input.corpus,
        out_path=snakemake.output.embeddings,
        meta=dict(snakemake.params.encoder),
    )
