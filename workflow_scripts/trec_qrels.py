import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.trec import qrels_step
from boolbench.workflow import script_context

with script_context(snakemake):
    qrels_step(
        snakemake.input.questions,
        snakemake.input.qrels,
        {key: snakemake.output[key] for key in ("completed", "group", "negatives", "original")},
    )
