import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.bm25 import build_bm25
from boolbench.retrieval.registry import ModelSpec
from boolbench.workflow import script_context

with script_context(snakemake):
    build_bm25(
        snakemake.input.corpus,
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        snakemake.output[0],
        passage_template=snakemake.params.model.get("passage_template", "{text}"),
    )
