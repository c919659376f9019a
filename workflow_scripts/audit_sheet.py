import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.audit import sheet_step
from boolbench.workflow import script_context

with script_context(snakemake):
    sheet_step(
        snakemake.input.questions,
        snakemake.input.corpus,
        dict(zip(snakemake.params.models, snakemake.input.runs, strict=True)),
        snakemake.params.questions,
        snakemake.params.depth,
        snakemake.params.seed,
        snakemake.output.csv,
        snakemake.output.key,
        snakemake.output.html,
    )
