import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus.question_sets import import_step
from boolbench.workflow import script_context

with script_context(snakemake):
    import_step(snakemake.params.path, snakemake.input.corpus, snakemake.output[0])
