import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.report.figures import figure_step
from boolbench.workflow import script_context

with script_context(snakemake):
    figure_step(
        snakemake.wildcards.figure,
        dict(snakemake.input.items()),
        snakemake.params.settings,
        snakemake.output.png,
        snakemake.output.svg,
    )
