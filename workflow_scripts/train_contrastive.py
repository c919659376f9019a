import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.baselines.contrastive import TrainingSettings
from boolbench.baselines.steps import train_step
from boolbench.retrieval.registry import ModelSpec
from boolbench.workflow import script_context

with script_context(snakemake):
    train_step(
        ModelSpec.from_config("base", snakemake.params.model),
        snakemake.wildcards.subset,
        snakemake.input.questions,
        snakemake.input.get("simple"),  # none for imported questions
        snakemake.input.corpus,
        TrainingSettings.from_config(snakemake.params.training, seed=snakemake.params.seed),
        out=snakemake.output[0],
        threads=snakemake.threads,
        passage_template=snakemake.params.model.get("passage_template", "{text}"),
        embeddings_path=snakemake.input.get("embeddings"),
    )
