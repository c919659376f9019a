import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus.question_sets import question_statistics_step
from boolbench.workflow import script_context

with script_context(snakemake):
    question_statistics_step(
        snakemake.input.questions, {key: snakemake.output[key] for key in ("csv", "md", "html")}
    )
