import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.steps import written_step
from boolbench.workflow import script_context

with script_context(snakemake):
    written_step(
        list(snakemake.input.questions),
        snakemake.output[0],
    )
