import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.steps import filter_step
from boolbench.workflow import job_shard, llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    filter_step(
        snakemake.input.questions,
        snakemake.input.candidates,
        snakemake.output.answers,
        llm,
        prompt=snakemake.params.prompt,
        seed=snakemake.params.seed,
        answer_max_tokens=snakemake.params.answer_max_tokens,
        max_passage_words=snakemake.params.max_passage_words,
        temperature=snakemake.params.temperature,
        shard=job_shard(snakemake),
    )
