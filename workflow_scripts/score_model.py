import _repo  # noqa: F401  (makes boolbench importable in any job env)
import pandas as pd

from boolbench.retrieval.evaluation import score_model, write_frame
from boolbench.retrieval.provenance import read_provenance
from boolbench.workflow import script_context

with script_context(snakemake):
    settings = snakemake.params.document_recall
    scores = score_model(
        snakemake.wildcards.model,
        snakemake.input.run,
        snakemake.input.original,
        questions=pd.read_parquet(snakemake.input.questions),
        original_qrels=pd.read_parquet(snakemake.input.qrels),
        document_run_path=snakemake.input.document,
        original_document_run_path=snakemake.input.document_original,
        corpus_path=snakemake.input.corpus,
        percents=list(settings["percents"]),
        min_document_passages=settings["min_document_passages"],
    )
    write_frame(scores, snakemake.output[0], read_provenance(snakemake.input.run))
