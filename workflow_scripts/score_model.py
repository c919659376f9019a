import _repo  # noqa: F401  (makes boolbench importable in any job env)
import pandas as pd

from boolbench.evaluation import score_model, write_frame
from boolbench.workflow import script_context

with script_context(snakemake):
    scores = score_model(
        snakemake.wildcards.model,
        snakemake.input.run,
        snakemake.input.original,
        questions=pd.read_parquet(snakemake.input.questions),
        original_qrels=pd.read_parquet(snakemake.input.qrels),
    )
    write_frame(scores, snakemake.output[0])
