import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.report.pages import llm_accounting, write_llm_accounting
from boolbench.workflow import script_context

with script_context(snakemake):
    table = llm_accounting(dict(snakemake.input.items()))
    write_llm_accounting(table, snakemake.output.csv, snakemake.output.html)
