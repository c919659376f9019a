import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.report.pages import write_examples
from boolbench.workflow import script_context

with script_context(snakemake):
    settings = snakemake.params.settings
    write_examples(
        snakemake.input.all,
        snakemake.input.corpus,
        snakemake.input.answers,
        settings["examples_per_type"],
        settings["passage_words"],
        snakemake.params.seed,
        snakemake.output[0],
    )
