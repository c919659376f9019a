import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.audit import confusion_step
from boolbench.workflow import script_context

with script_context(snakemake):
    confusion_step(
        snakemake.input.sheet,
        snakemake.input.key,
        snakemake.input.judgements,
        snakemake.params.source,
        snakemake.params.depth,
        snakemake.output.csv,
        snakemake.output.by_model,
        snakemake.output.html,
    )
