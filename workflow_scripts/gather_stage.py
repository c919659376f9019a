import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.steps import gather_stage
from boolbench.workflow import script_context

# The gather job of every LLM stage (a script, not a run: block, which would start another
# Snakemake process that parses the whole workflow: 4-5 s on the critical path, each time).
with script_context(snakemake):
    gather_stage(
        snakemake.input.shards,
        snakemake.input.accounting,
        rows_out=snakemake.output[0],
        accounting_out=snakemake.output.accounting,
        checks=snakemake.input.get("checks"),
        checks_out=snakemake.output.get("check"),
    )
