import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.grouping.clustering import assign_corpus
from boolbench.workflow import script_context

with script_context(snakemake):
    assign_corpus(
        snakemake.input.embeddings,
        snakemake.input.components,
        snakemake.input.svd,
        snakemake.input.clusters,
        snakemake.params.metric,
        snakemake.output[0],
    )
