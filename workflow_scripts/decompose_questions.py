import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.baselines.steps import decompose_step
from boolbench.workflow import job_shard, llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    settings = snakemake.params.decompose
    decompose_step(
        snakemake.input.questions,
        snakemake.output.decomposed,
        llm,
        prompt=snakemake.params.prompt,
        split=snakemake.params.split,
        retries=settings["retries"],
        seed=snakemake.params.seed,
        max_tokens=settings["max_tokens"],
        json_schema=settings["json_schema"],
        shard=job_shard(snakemake),
    )
