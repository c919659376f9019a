import _repo  # noqa: F401  (makes boolbench importable in any job env)
import pandas as pd

from boolbench.corpus.pdf_collection import extraction_quality, pdf_files
from boolbench.workflow import script_context

with script_context(snakemake):
    extraction_quality(
        pd.read_parquet(snakemake.input.passages),
        doc_ids=list(pdf_files(snakemake.params.path)),
        reference_dir=snakemake.params.reference,
        out=snakemake.output.scores,
        summary_out=snakemake.output.summary,
    )
