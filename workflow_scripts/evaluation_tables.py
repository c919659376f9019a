import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.evaluation import table2_step
from boolbench.workflow import script_context

with script_context(snakemake):
    table2_step(
        list(snakemake.params.models),
        list(snakemake.input.scores),
        snakemake.input.significance,
        snakemake.input.questions,
        snakemake.params.split,
        snakemake.params.alpha,
        dict(snakemake.output.items()),
    )
