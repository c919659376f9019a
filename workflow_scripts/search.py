import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieve import search
from boolbench.workflow import model_spec, script_context

with script_context(snakemake):
    search(
        model_spec(snakemake, snakemake.wildcards.model),
        index_path=snakemake.input.index,
        embeddings_path=snakemake.input.get("embeddings"),
        questions_path=snakemake.input.questions,
        queries_path=snakemake.input.queries,
        corpus_path=snakemake.input.corpus,
        depth=snakemake.params.depth,
        out=(snakemake.output.run, snakemake.output.original),
        threads=snakemake.threads,
    )
