import _repo  # noqa: F401  (makes boolbench importable in any job env)

from boolbench.generation.audit import judge_step
from boolbench.generation.filtering import AnswererSettings
from boolbench.workflow import llm_job, script_context

with script_context(snakemake), llm_job(snakemake) as llm:
    judge_step(
        snakemake.input.sheet,
        snakemake.output.judgements,
        llm,
        snakemake.params.prompts,
        AnswererSettings.from_config(
            snakemake.params.answerer, snakemake.params.max_passage_words, snakemake.params.seed
        ),
    )
