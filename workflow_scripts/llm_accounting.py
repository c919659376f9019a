import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.report.pages import llm_accounting_step
from boolbench.workflow import script_context

with script_context(snakemake):
    llm_accounting_step(dict(snakemake.input.items()), snakemake.output.csv, snakemake.output.html)
