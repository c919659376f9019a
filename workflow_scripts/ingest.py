import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.corpus.sources import SourceSpec, ingest
from boolbench.workflow import script_context

with script_context(snakemake):
    spec = SourceSpec.from_config(snakemake.params.source)
    if spec.source == "pdf":  # read what the extract_pdf job wrote
        spec = spec.extracted(snakemake.input.corpus)
    ingest(
        spec,
        corpus_out=snakemake.output.corpus,
        queries_out=snakemake.output.queries,
        qrels_out=snakemake.output.qrels,
    )
