import _repo  # noqa: F401  (makes boolbench importable in any job env)
import pandas as pd

from boolbench.retrieval.evaluation import write_document_recall_table
from boolbench.workflow import script_context

with script_context(snakemake):
    settings = snakemake.params.document_recall
    write_document_recall_table(
        pd.read_parquet(snakemake.input.metrics),
        list(snakemake.params.models),
        snakemake.params.split,
        list(settings["percents"]),
        settings["min_document_passages"],
        {key: snakemake.output[key] for key in ("csv", "md", "html")},
    )
