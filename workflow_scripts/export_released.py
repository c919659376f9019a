import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus.question_sets import export_released
from boolbench.workflow import script_context

with script_context(snakemake):
    export_released(
        snakemake.input.questions,
        snakemake.input.corpus,
        {key: snakemake.output[key] for key in ("eval", "corpus", "card")},
        dict(snakemake.params.card),
    )
