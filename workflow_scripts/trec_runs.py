import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.trec import trec_runs_step
from boolbench.workflow import script_context

with script_context(snakemake):
    trec_runs_step(
        snakemake.input.run,
        snakemake.input.original,
        snakemake.input.questions,
        {"run": snakemake.output.run, "original": snakemake.output.original},
        tag=snakemake.wildcards.model,
    )
