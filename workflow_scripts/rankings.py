import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.report.pages import write_rankings
from boolbench.workflow import script_context

with script_context(snakemake):
    write_rankings(
        snakemake.input.questions,
        snakemake.input.corpus,
        dict(zip(snakemake.params.models, snakemake.input.runs, strict=True)),
        top=10,
        max_questions=snakemake.params.settings["rankings_questions"],
        html_out=snakemake.output[0],
    )
