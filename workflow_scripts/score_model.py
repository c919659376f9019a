import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.evaluation import score_model_step
from boolbench.workflow import script_context

with script_context(snakemake):
    score_model_step(
        snakemake.wildcards.model,
        {
            key: snakemake.input[key]
            for key in (
                "run",
                "original",
                "document",
                "document_original",
                "questions",
                "qrels",
                "corpus",
            )
        },  # fmt: skip
        snakemake.params.document_recall,
        snakemake.output[0],
    )
