import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.encoding import EncoderSettings, gather_shards
from boolbench.workflow import script_context

with script_context(snakemake):
    gather_shards(
        list(snakemake.input.shards),
        snakemake.input.corpus,
        out_path=snakemake.output.embeddings,
        settings=EncoderSettings.from_config(snakemake.params.encoder),
    )
