import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.questions import GenerationSettings
from boolbench.generation.steps import atomic_step
from boolbench.workflow import job_shard, llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    atomic_step(
        snakemake.wildcards.kind,
        snakemake.input.candidates,
        snakemake.output.questions,
        llm,
        prompt=snakemake.params.prompt,
        settings=GenerationSettings.from_config(snakemake.params.generation, snakemake.params.seed),
        shard=job_shard(snakemake),
        template=snakemake.params.template,
        kinds=snakemake.input.get("kinds"),
        subject_prompt=snakemake.params.subject_prompt,
        member_judge=snakemake.params.member_judge,
        sort_prompt=snakemake.params.sort_prompt,
        place_prompt=snakemake.params.place_prompt,
        topical=snakemake.params.topical,
    )
