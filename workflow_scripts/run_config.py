import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.report.pages import write_config
from boolbench.workflow import script_context

with script_context(snakemake):
    write_config(dict(snakemake.params.config), snakemake.output.yaml, snakemake.output.html)
