import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.steps import statistics_step
from boolbench.workflow import script_context

with script_context(snakemake):
    statistics_step(
        snakemake.input.all,
        {"simple": snakemake.input.simple, "disjunctive": snakemake.input.disjunctive},
        snakemake.input.check,
        csv_out=snakemake.output.csv,
        md_out=snakemake.output.md,
        html_out=snakemake.output.html,
        report_out=snakemake.output.report,
    )
