import _repo  # noqa: F401  (makes boolbench importable in any job env)
import pandas as pd

from boolbench.retrieval.evaluation import aggregate, write_frame, write_tables
from boolbench.retrieval.provenance import read_provenance, write_provenance_table
from boolbench.workflow import script_context

with script_context(snakemake):
    models = list(snakemake.params.models)
    scores = pd.concat([pd.read_parquet(p) for p in snakemake.input.scores], ignore_index=True)
    provenance = {
        m: read_provenance(p) for m, p in zip(models, snakemake.input.scores, strict=True)
    }
    metrics = aggregate(scores)
    write_frame(metrics, snakemake.output.metrics, provenance)
    write_tables(
        metrics,
        models,
        snakemake.params.split,
        pd.read_parquet(snakemake.input.significance),
        snakemake.params.alpha,
        pd.read_parquet(snakemake.input.questions),
        {key: snakemake.output[key] for key in ("csv", "md", "tex", "html")},
    )
    write_provenance_table(
        provenance, snakemake.output.provenance_md, snakemake.output.provenance_html
    )
