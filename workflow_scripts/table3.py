import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.baselines.steps import ORACLE_ROW, table3_step
from boolbench.workflow import script_context

with script_context(snakemake):
    trained = dict(zip(snakemake.params.trained, snakemake.input.contrastive, strict=True))
    runs = {"Decomposed query": snakemake.input.decomposed}
    if snakemake.input.get("oracle"):
        runs[ORACLE_ROW] = snakemake.input.oracle
    table3_step(
        snakemake.params.retriever,
        snakemake.input.base_scores,
        runs,
        trained,
        snakemake.input.questions,
        snakemake.input.expressions,
        snakemake.params.split,
        {key: snakemake.output[key] for key in ("csv", "md", "tex", "html")},
        not_computed=dict(snakemake.params.not_computed),
        training_side=snakemake.params.training_side,
    )
