import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.grouping.clustering import ClusteringSettings, cluster
from boolbench.workflow import script_context

with script_context(snakemake):
    cluster(
        snakemake.input.svd,
        snakemake.input.variance,
        settings=ClusteringSettings.from_config(snakemake.params.clustering),
        clusters_out=snakemake.output.clusters,
        report_out=snakemake.output.report,
    )
