import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.embeddings import gather_shards
from boolbench.workflow import script_context

# Used for the clustering encoder and for every dense model: params.encoder is the settings that
# produced the vectors, stored beside them.
with script_context(snakemake):
    gather_shards(
        list(snakemake.input.shards),
        snakemake.input.corpus,
        out_path=snakemake.output.embeddings,
        meta=dict(snakemake.params.encoder),
    )
