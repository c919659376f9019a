import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.audit import sheet_step
from boolbench.workflow import script_context

with script_context(snakemake):
    sheet_step(
        snakemake.input.questions,
        snakemake.input.corpus,
        snakemake.params.questions,
        snakemake.params.seed,
        snakemake.output.csv,
        snakemake.output.html,
    )
