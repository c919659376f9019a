import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.steps import assemble_step
from boolbench.workflow import script_context

with script_context(snakemake):
    assemble_step(
        list(snakemake.input.questions),
        snakemake.input.answers,
        snakemake.input.pooled,
        all_out=snakemake.output.all,
        kept_out=snakemake.output.kept,
        mode=snakemake.params.mode,
    )
