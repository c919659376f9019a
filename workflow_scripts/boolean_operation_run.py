import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.baselines.steps import boolean_run_step
from boolbench.workflow import model_spec, script_context

with script_context(snakemake):
    boolean_run_step(
        snakemake.wildcards.method,
        model_spec(snakemake, snakemake.params.retriever),
        index_path=snakemake.input.index,
        embeddings_path=snakemake.input.get("embeddings"),
        questions_path=snakemake.input.questions,
        decomposed_path=snakemake.input.get("decomposed"),
        base_run_path=snakemake.input.base_run,
        split=snakemake.params.split,
        k=snakemake.params.k,
        depth=snakemake.params.depth,
        out=snakemake.output[0],
        threads=snakemake.threads,
    )
