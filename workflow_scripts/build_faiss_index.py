import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.dense import build_index
from boolbench.retrieval.registry import ModelSpec
from boolbench.workflow import script_context

with script_context(snakemake):
    build_index(
        snakemake.input.embeddings,
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        snakemake.output[0],
        seed=snakemake.params.seed,
        threads=snakemake.threads,
    )
