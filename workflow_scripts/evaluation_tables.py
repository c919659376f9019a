import _repo  # noqa: F401  (makes boolbench importable in any job env)
import pandas as pd

from boolbench.evaluation import aggregate, write_frame, write_tables
from boolbench.workflow import script_context

with script_context(snakemake):
    scores = pd.concat([pd.read_parquet(p) for p in snakemake.input.scores], ignore_index=True)
    metrics = aggregate(scores)
    write_frame(metrics, snakemake.output.metrics)
    write_tables(
        metrics,
        list(snakemake.params.models),
        snakemake.params.split,
        pd.read_parquet(snakemake.input.significance),
        snakemake.params.alpha,
        {key: snakemake.output[key] for key in ("csv", "md", "tex", "html")},
    )
