import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.questions import GenerationSettings
from boolbench.generation.steps import compose_step
from boolbench.workflow import job_shard, llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    compose_step(
        snakemake.wildcards.operator,
        snakemake.input.candidates,
        snakemake.input.get("simple"),
        snakemake.input.get("disjunctive"),
        snakemake.output.questions,
        llm,
        prompt=snakemake.params.prompt,
        template=snakemake.params.template,
        settings=GenerationSettings.from_config(snakemake.params.generation, snakemake.params.seed),
        shard=job_shard(snakemake),
        forms=snakemake.params.forms,
    )
