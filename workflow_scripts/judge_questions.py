import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.filtering import AnswererSettings, PoolSettings
from boolbench.generation.steps import judge_step
from boolbench.workflow import job_shard, llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    judge_step(
        snakemake.input.written,
        snakemake.input.simple,
        snakemake.input.disjunctive,
        snakemake.input.candidates,
        snakemake.input.corpus,
        runs=dict(zip(snakemake.params.pooling["models"], snakemake.input.runs, strict=True)),
        out={name: snakemake.output[name] for name in ("answers", "check", "pooled")},
        llm=llm,
        prompt=snakemake.params.prompt,
        settings=AnswererSettings.from_config(
            snakemake.params.answerer, snakemake.params.max_passage_words, snakemake.params.seed
        ),
        pooling=PoolSettings.from_config(snakemake.params.pooling),
        membership=snakemake.params.membership,
        named=snakemake.params.named,
        about=snakemake.params.about,
        mode=snakemake.params.mode,
        shard=job_shard(snakemake),
    )
