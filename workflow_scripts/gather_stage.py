import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.steps import gather_stage
from boolbench.workflow import script_context

# The gather job of every LLM stage (a script, not a run: block, which would start another
# Snakemake process that parses the whole workflow: 4-5 s on the critical path, each time).
# Every output but the accounting is the gather of the input of the same name.
with script_context(snakemake):
    gather_stage(
        {
            name: (list(snakemake.input[name]), path)
            for name, path in snakemake.output.items()
            if name != "accounting"
        },
        snakemake.input.accounting,
        accounting_out=snakemake.output.accounting,
    )
