import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.report.significance import significance_step
from boolbench.workflow import script_context

with script_context(snakemake):
    settings = snakemake.params.significance
    significance_step(
        list(snakemake.input.scores),
        list(snakemake.params.models),
        snakemake.params.split,
        settings["resamples"],
        settings["alpha"],
        snakemake.params.seed,
        snakemake.output.tests,
        snakemake.output.html,
    )
