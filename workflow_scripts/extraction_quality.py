import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus.pdf_collection import extraction_quality_step
from boolbench.workflow import script_context

with script_context(snakemake):
    extraction_quality_step(
        snakemake.input.passages,
        snakemake.params.path,
        snakemake.params.reference,
        snakemake.output.scores,
        snakemake.output.summary,
    )
