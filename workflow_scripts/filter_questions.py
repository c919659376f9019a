import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.filtering import AnswererSettings
from boolbench.generation.steps import filter_step
from boolbench.workflow import job_shard, llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    filter_step(
        list(snakemake.input.questions),
        snakemake.input.simple,
        snakemake.input.disjunctive,
        snakemake.input.candidates,
        snakemake.output.answers,
        snakemake.output.check,
        llm,
        prompt=snakemake.params.prompt,
        settings=AnswererSettings.from_config(
            snakemake.params.answerer, snakemake.params.max_passage_words, snakemake.params.seed
        ),
        shard=job_shard(snakemake),
    )
