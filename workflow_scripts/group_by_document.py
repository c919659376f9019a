import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.grouping.clustering import group_by_document
from boolbench.workflow import script_context

with script_context(snakemake):
    group_by_document(
        snakemake.input.corpus,
        window=snakemake.params.window,
        groups_out=snakemake.output.groups,
        report_out=snakemake.output.report,
    )
