import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.evaluation import document_recall_step
from boolbench.workflow import script_context

with script_context(snakemake):
    document_recall_step(
        snakemake.input.metrics,
        list(snakemake.params.models),
        snakemake.params.split,
        snakemake.params.document_recall,
        {key: snakemake.output[key] for key in ("csv", "md", "html")},
    )
