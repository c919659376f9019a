import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.grouping.clustering import reduce
from boolbench.workflow import script_context

with script_context(snakemake):
    reduce(
        snakemake.input.embeddings,
        sample_size=snakemake.params.sample_size,
        svd_components=snakemake.params.svd_components,
        seed=snakemake.params.seed,
        svd_out=snakemake.output.svd,
        variance_out=snakemake.output.variance,
        components_out=snakemake.output.components,
    )
