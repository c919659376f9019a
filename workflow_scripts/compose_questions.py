import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.questions import GenerationSettings
from boolbench.generation.steps import compose_step
from boolbench.workflow import job_shard, llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    compose_step(
        snakemake.wildcards.operator,
        snakemake.input.candidates,
        snakemake.input.simple,
        snakemake.input.disjunctive,
        snakemake.output.questions,
        llm,
        prompt=snakemake.params.prompt,
        forms=snakemake.params.forms,
        place_forms=snakemake.params.place_forms,
        settings=GenerationSettings.from_config(snakemake.params.generation, snakemake.params.seed),
        shard=job_shard(snakemake),
        split_by=snakemake.params.split["by"],
        train_fraction=snakemake.params.split["train_fraction"],
        story_forms=snakemake.params.story_forms,
    )
