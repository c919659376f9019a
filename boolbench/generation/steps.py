"""The question-generation steps at the file level: read inputs, call the logic, write outputs.
Workflow scripts call these; tests call them without Snakemake."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.generation import compose, dataset, filtering, stories
from boolbench.generation.prompts import Prompt
from boolbench.generation.questions import (
    ATOMIC_SCHEMAS,
    GenerationSettings,
    kind_questions,
    member_sorts,
    name_subjects,
    simple_questions,
    with_subjects,
)
from boolbench.io import write_table_atomic, write_text_atomic
from boolbench.llm import LLMClient

log = logging.getLogger(__name__)
PathLike = str | os.PathLike
# (index, count): an LLM job's share of the groups. Group g belongs to shard g % count, so a
# group's requests are the same whatever the count (and the response cache answers them).
Shard = tuple[int, int]
WHOLE: Shard = (0, 1)


def in_shard(frame: pd.DataFrame, shard: Shard) -> pd.DataFrame:
    """The rows of `frame` whose `group` belongs to `shard`."""
    index, count = shard
    return frame if count == 1 else frame[frame["group"] % count == index]


def _write(frame: pd.DataFrame, schema: pa.Schema, path: PathLike) -> None:
    write_table_atomic(frame_table(frame, schema), path)


def frame_table(frame: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """`frame` as a table of `schema`; an empty frame (a shard without groups) may lack columns."""
    if frame.empty:
        return schema.empty_table()
    return pa.Table.from_pandas(frame, schema=schema, preserve_index=False)


def atomic_step(
    kind: str,
    candidates: PathLike,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    settings: GenerationSettings,
    shard: Shard = WHOLE,
    template: str | None = None,
    kinds: PathLike | None = None,
    subject_prompt: dict | None = None,
    member_judge: dict | None = None,
    sort_prompt: dict | None = None,
    place_prompt: dict | None = None,
    topical: dict | None = None,
) -> None:
    """One shard of the groups' atomic questions, each group by its `construction` (a column
    of the candidates; kind where it has none). Groups of a kind: `disjunctive`, the kind the
    group's passages share (its question rendered from `template`), its members and what each
    is called (the title, or a name given with `subject_prompt` where titles cannot tell
    passages apart; with `member_judge` (the job's params: prompt, answerer section,
    max_passage_words, membership and named templates, lead_words) the members are those the
    judge reads as of the kind; with `sort_prompt` each member's sort is named, with
    `place_prompt` its place), or `simple`, a question per member of the kind read from
    `kinds`. Groups of a story, topic or page (stories.py): with `topical`, per construction
    its prompts topic (None for a page), aspect and question and its disjunctive template."""
    cands = in_shard(pd.read_parquet(candidates), shard)
    by = cands["construction"] if "construction" in cands else pd.Series("kind", cands.index)
    tables = []
    for construction, part in cands.groupby(by, sort=True):
        if construction == "kind":
            tables.append(_kind_step(kind, part, kinds, shard, llm, prompt, settings, template,
                                     subject_prompt, member_judge, sort_prompt,
                                     place_prompt))  # fmt: skip
        else:
            if not topical or construction not in topical:
                raise ValueError(f"{candidates}: construction {construction!r} has no prompts")
            judge = filtering.member_judge(member_judge, settings.seed)
            tables.append(_story_step(kind, part, kinds, shard, llm, topical[construction],
                                      settings, judge, construction))  # fmt: skip
    table = (pd.concat(tables, ignore_index=True).sort_values("group", kind="stable")
             if tables else pd.DataFrame(columns=ATOMIC_SCHEMAS[kind].names))  # fmt: skip
    _write(table, ATOMIC_SCHEMAS[kind], out)


def _kind_step(kind, cands, kinds, shard, llm, prompt, settings, template, subject_prompt,
               member_judge, sort_prompt, place_prompt) -> pd.DataFrame:  # fmt: skip
    """The atomic questions of groups of a kind (`atomic_step`)."""
    if kind == "disjunctive":
        table = kind_questions(cands, llm, Prompt(**prompt), settings, template, llm.model_name)
        with_kind = cands[cands["group"].isin(table.loc[table["status"] != "dropped", "group"])]
        subject = Prompt(**subject_prompt) if subject_prompt else None
        subjects = name_subjects(with_kind, llm, subject, settings)
        judge = filtering.member_judge(member_judge, settings.seed)
        if judge is not None:
            table = filtering.verify_members(
                table, cands, llm, Prompt(**judge["prompt"]), judge["answerer"],
                judge["membership"], judge["lead_words"], judge["named"], subjects,
            )  # fmt: skip
        table = with_subjects(table, cands, subjects)
        if sort_prompt is not None:
            table = member_sorts(table, cands, llm, Prompt(**sort_prompt), settings)
        if place_prompt is not None:
            table = member_sorts(table, cands, llm, Prompt(**place_prompt), settings, "places")
        return table
    kind_rows = in_shard(pd.read_parquet(kinds), shard)
    kind_rows = kind_rows[kind_rows["group"].isin(cands["group"])]
    return simple_questions(cands, kind_rows, llm, Prompt(**prompt), settings, llm.model_name)


def _story_step(
    kind: str,
    cands: pd.DataFrame,
    kinds: PathLike | None,
    shard: Shard,
    llm: LLMClient,
    story: dict,
    settings: GenerationSettings,
    judge: dict | None = None,
    construction: str = stories.STORY,
) -> pd.DataFrame:
    """The atomic questions of story groups and their kin (`construction`): their topics and
    aspects (with `judge`, the members it reads as about the topic), or the aspects'
    questions."""
    if kind == "disjunctive":
        topic = Prompt(**story["topic"]) if story.get("topic") else None
        table = stories.story_kinds(
            cands, llm, topic, Prompt(**story["aspect"]), settings, story["template"],
            llm.model_name, construction,
        )  # fmt: skip
        if judge is not None and judge["about"]:
            table = filtering.verify_story_members(
                table, cands, llm, Prompt(**judge["prompt"]), judge["answerer"], judge["about"]
            )
        return table
    kind_rows = in_shard(pd.read_parquet(kinds), shard)
    kind_rows = kind_rows[kind_rows["group"].isin(cands["group"])]
    prompt = Prompt(**story["question"])
    return stories.story_questions(cands, kind_rows, llm, prompt, settings, llm.model_name)


def compose_step(
    operator: str,
    candidates: PathLike,
    simple: PathLike,
    disjunctive: PathLike,
    out: PathLike,
    llm: LLMClient,
    prompt: dict,
    forms: list[str],
    settings: GenerationSettings,
    shard: Shard = WHOLE,
    place_forms: list[str] | None = None,
    split_by: str = "kind",
    train_fraction: float = 0.5,
    story_forms: list[str] | None = None,
) -> None:
    """AND/OR/NOT questions of one shard of the groups, rendered from `forms` (OR: or from
    `place_forms`; story groups: from `story_forms`, AND from their members' questions) and
    rewritten by the LLM in compose mode llm. Every group is read: groups of one kind are one
    set (`compose.same_kind`), whose members label every OR question of
    its groups and are every NOT question's positives. `train_fraction` of the kinds
    (`split_by` kind: every group of one kind in one split) or of the groups are in the train
    split."""
    cands = pd.read_parquet(candidates)
    table = compose.compose(
        operator.upper(),
        cands,
        pd.read_parquet(simple),
        pd.read_parquet(disjunctive),
        llm,
        Prompt(**prompt),
        settings,
        forms,
        llm.model_name,
        place_forms or (),
        planned=set(in_shard(cands, shard)["group"].astype(int)),
        split_by=split_by,
        train_fraction=train_fraction,
        story_forms=story_forms or (),
    )
    _write(table, compose.COMPOSED_SCHEMA, out)


def written_step(questions: list[PathLike], out: PathLike):
    """questions/written.parquet: every composed question that was written, in the dataset's
    columns, with its split (what the models search before the judge decides)."""
    composed = pd.concat([pd.read_parquet(p) for p in questions], ignore_index=True)
    written = dataset.written(composed)
    write_table_atomic(dataset.dataset_table(written), out)


def judge_step(
    written: PathLike,
    simple: PathLike,
    disjunctive: PathLike,
    candidates: PathLike,
    corpus: PathLike,
    runs: dict[str, PathLike],
    out: dict[str, PathLike],
    llm: LLMClient,
    prompt: dict,
    settings: filtering.AnswererSettings,
    pooling: filtering.PoolSettings,
    membership: str,
    mode: str,
    shard: Shard = WHOLE,
    named: str | None = None,
    about: str | None = None,
) -> None:
    """The judge of one shard of the groups (`about`: the template that asks whether a
    passage is about a story group's topic): the filter's reading of every labelled pair and
    its answerer check (out answers, check), then the pooled passages of the questions it
    keeps in filter `mode` (out pooled; `named`: the template that asks whether a pooled OR
    passage's subject is of the kind). One server and one prompt cache for both."""
    questions = in_shard(pd.read_parquet(written), shard)
    cands = pd.read_parquet(candidates)
    kinds = in_shard(pd.read_parquet(disjunctive), shard)
    simples = in_shard(pd.read_parquet(simple), shard)
    pooled = filtering.pools(questions, {m: pd.read_parquet(p) for m, p in runs.items()},
                             pooling.depth)  # fmt: skip
    # the labelled passages: the candidates and their copies in the corpus (candidates.py)
    labelled = {p for column in ("positives", "negatives") for pids in questions[column]
                for p in pids}  # fmt: skip
    texts, titles = _passages(corpus, set(cands["pid"]) | set(pooled["pid"]) | labelled)
    reads = filtering.Reads(texts, titles, membership, settings, pooling.lead_words, named, about)
    answers, check = filtering.filter_and_check(
        questions, simples, kinds, cands, llm, Prompt(**prompt), settings, reads
    )
    passed = filtering.verdicts(answers)
    kept = set(passed.loc[passed["passes_strict" if mode == "strict" else "passes_default"], "qid"])
    judged = filtering.judge_pools(
        questions[questions["qid"].isin(kept)],
        pooled[pooled["qid"].isin(kept)],
        filtering.construction(simples, kinds, cands),
        reads,
        llm,
        Prompt(**prompt),
        settings,
    )
    _write(answers, filtering.ANSWERS_SCHEMA, out["answers"])
    _write(check, filtering.CHECK_SCHEMA, out["check"])
    _write(judged, filtering.POOLED_SCHEMA, out["pooled"])


def _passages(corpus: PathLike, pids: set[str]) -> tuple[dict[str, str], dict[str, str | None]]:
    """Text and title of the passages `pids` (none: empty, which pyarrow's filter cannot give)."""
    if not pids:
        return {}, {}
    table = pq.read_table(corpus, columns=["pid", "title", "text"],
                          filters=[("pid", "in", sorted(pids))])  # fmt: skip
    pid = table["pid"].to_pylist()
    return dict(zip(pid, table["text"].to_pylist(), strict=True)), dict(
        zip(pid, table["title"].to_pylist(), strict=True)
    )


def assemble_step(
    questions: list[PathLike],
    answers: PathLike,
    pooled: PathLike,
    all_out: PathLike,
    kept_out: PathLike,
    mode: str,
) -> None:
    """The dataset: every composed question with its verdicts, and the kept ones with their
    pooled labels."""
    composed = pd.concat([pd.read_parquet(p) for p in questions], ignore_index=True)
    all_questions, kept = dataset.assemble(
        composed, pd.read_parquet(answers), pd.read_parquet(pooled), mode
    )
    dataset.write_dataset(all_questions, kept, all_out, kept_out)


def statistics_step(
    all_questions: PathLike,
    steps: dict[str, PathLike],
    check: PathLike,
    csv_out: PathLike,
    md_out: PathLike,
    html_out: PathLike,
    report_out: PathLike,
) -> None:
    """Table 1 with the answerer check under it, and generation_report.json."""
    table = pd.read_parquet(all_questions)
    atomic = {k: pd.read_parquet(v) for k, v in steps.items()}
    rates = filtering.check_rates(pd.read_parquet(check))
    notes = [*dataset.TABLE1_NOTES, dataset.check_line(rates)]
    rejected = dataset.rejections(atomic, table)
    dataset.write_table1(dataset.table1(table), csv_out, md_out, html_out, notes, rejected)
    report = dataset.generation_report(atomic, table)
    report["answerer_check"] = rates
    write_text_atomic(report_out, json.dumps(report, indent=2, sort_keys=True) + "\n")


# ---------------------------------------------------------------------------------------------
# Gathering the shards of an LLM stage


def gather_shards(shards: list[PathLike], out: PathLike) -> int:
    """One Parquet file from the shards of an LLM stage, sorted by group (else by qid, which
    numbers groups) and stable, so rows of one group keep their order: the result is the same
    for every shard count (and, where rows carry a group, the order an unsharded job writes)."""
    table = pa.concat_tables([pq.read_table(path) for path in shards])
    key = "group" if "group" in table.column_names else "qid"
    write_table_atomic(table.sort_by([(key, "ascending")]), out)
    return table.num_rows


def gather_stage(
    tables: dict[str, tuple[list[PathLike], PathLike]],
    accounting: list[PathLike],
    accounting_out: PathLike,
) -> None:
    """The gather job of an LLM stage: each of its tables (name -> (shards, out)) and its
    accounting, one file each whatever the shard count."""
    for name, (shards, out) in tables.items():
        rows = gather_shards(shards, out)
        log.info("%s: %d rows from %d shards -> %s", name, rows, len(shards), out)
    gather_accounting(accounting, accounting_out)


def gather_accounting(shards: list[PathLike], out: PathLike) -> None:
    """The accounting of an LLM stage: every count, token, cost and second of its shards."""
    total: dict = {}
    for path in shards:
        for key, value in json.loads(Path(path).read_text()).items():
            if isinstance(value, dict):  # errors by kind
                merged = total.setdefault(key, {})
                for kind, count in value.items():
                    merged[kind] = merged.get(kind, 0) + count
            else:
                total[key] = total.get(key, 0) + value
    write_text_atomic(out, json.dumps(total, indent=2, sort_keys=True) + "\n")
