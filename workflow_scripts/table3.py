import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.baselines import table3_step
from boolbench.workflow import script_context

LABELS = {"and": "AND", "or": "OR", "not": "NOT", "all": "all"}

with script_context(snakemake):
    trained = {
        f"Boolean contrastive ({LABELS[name.removeprefix('contrastive-')]})": path
        for name, path in zip(snakemake.params.trained, snakemake.input.contrastive, strict=True)
    }
    table3_step(
        snakemake.params.retriever,
        snakemake.input.base_scores,
        {
            "Decomposed query": snakemake.input.decomposed,
            "Oracle decomposition": snakemake.input.oracle,
        },
        trained,
        snakemake.input.questions,
        snakemake.input.expressions,
        snakemake.params.split,
        {key: snakemake.output[key] for key in ("csv", "md", "tex", "html")},
        training_side=snakemake.params.training_side,
    )
