import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.grouping.candidates import sample_candidates
from boolbench.workflow import script_context

with script_context(snakemake):
    sample_candidates(
        snakemake.input.groups,
        snakemake.input.corpus,
        n_groups=snakemake.params.n_groups,
        sizes=list(snakemake.params.sizes),
        seed=snakemake.params.seed,
        candidates_out=snakemake.output[0],
        embeddings_path=snakemake.input.get("embeddings"),
        skip_loosest=snakemake.params.skip_loosest,
        genre=snakemake.params.genre,
        source=snakemake.params.source,
        grouping=snakemake.params.grouping,
    )
