import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.registry import ModelSpec
from boolbench.retrieval.search import rerank_runs
from boolbench.workflow import script_context

with script_context(snakemake):
    rerank_runs(
        ModelSpec.from_config(snakemake.wildcards.model, snakemake.params.model),
        base_runs=(snakemake.input.run, snakemake.input.original_run),
        base_document_runs=(snakemake.input.document_run, snakemake.input.original_document_run),
        questions_path=snakemake.input.questions,
        queries_path=snakemake.input.queries,
        corpus_path=snakemake.input.corpus,
        depth=snakemake.params.depth,
        out=(snakemake.output.run, snakemake.output.original),
        document_out=(snakemake.output.document, snakemake.output.document_original),
        threads=snakemake.threads,
        passage_template=snakemake.params.model.get("passage_template", "{text}"),
    )
