import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus.pdf_collection import extract_step
from boolbench.workflow import script_context

with script_context(snakemake):
    extract_step(
        snakemake.params.path,
        snakemake.params.extraction,
        passages_out=snakemake.output.passages,
        report_out=snakemake.output.report,
        workers=snakemake.threads,
    )
