import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.retrieval.search import search
from boolbench.workflow import model_spec, script_context

with script_context(snakemake):
    search(
        model_spec(snakemake, snakemake.wildcards.model),
        index_path=snakemake.input.index,
        embeddings_path=snakemake.input.get("embeddings"),
        questions_path=snakemake.input.questions,
        queries_path=snakemake.input.queries,
        qrels_path=snakemake.input.qrels,
        corpus_path=snakemake.input.corpus,
        depth=snakemake.params.depth,
        min_document_passages=snakemake.params.min_document_passages,
        out=(snakemake.output.run, snakemake.output.original),
        document_out=(snakemake.output.document, snakemake.output.document_original),
        threads=snakemake.threads,
        passage_template=snakemake.params.model.get("passage_template", "{text}"),
    )
