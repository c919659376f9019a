import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus.pdf import ExtractionSettings
from boolbench.corpus.pdf_collection import extract_collection, pdf_files
from boolbench.workflow import script_context

with script_context(snakemake):
    settings = snakemake.params.extraction
    extract_collection(
        pdf_files(snakemake.params.path),
        ExtractionSettings.from_config(settings),
        passages_out=snakemake.output.passages,
        report_out=snakemake.output.report,
        workers=snakemake.threads,
        timeout_s=settings["timeout_s"],
        cache_dir=settings["cache_dir"],
    )
