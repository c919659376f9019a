import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus import SourceSpec, ingest
from boolbench.workflow import script_context

with script_context(snakemake):
    ingest(
        SourceSpec.from_config(snakemake.params.source),
        corpus_out=snakemake.output.corpus,
        queries_out=snakemake.output.queries,
        qrels_out=snakemake.output.qrels,
    )
