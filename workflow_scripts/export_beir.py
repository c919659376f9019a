import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.dataset import beir_export_step
from boolbench.workflow import script_context

with script_context(snakemake):
    beir_export_step(
        snakemake.input.kept,
        snakemake.input.corpus,
        dict(snakemake.output.items()),
        dict(snakemake.params.card),
    )
