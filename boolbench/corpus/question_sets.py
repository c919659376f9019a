"""Question sets from files: the released BoolQuestions layout, another boolbench run's dataset,
or a BEIR folder exported by boolbench; and our dataset written in the released layout.

The released layout (Hugging Face `ustc-zhangzm/BoolQuestions`, configs MSMARCO and
NaturalQuestions, split `eval`): one record per question with `qid`, `question`,
`question_type` (and / or / not), `positive_ctxs` and `negative_ctxs` (lists of objects with a
`passage_id`: the group labels), and, in our exports, `split` (train/test) and
`pooled_positive_ctxs` / `pooled_negative_ctxs` (the pooled judgements, boolbench.labels; both
optional when read, empty when absent). Read from Parquet (the hub's parquet
files, or datasets' to_parquet) or JSON (JSON lines as datasets' to_json writes them, or one
JSON array). The corpus configs (MSMARCO-corpus, NaturalQuestions-corpus) hold `docid`, `doc`
and, for NQ, `title`: corpus source `boolquestions` (boolbench.corpus.sources).

Artifacts:
- boolquestions.parquet of a corpus with `questions:` (rule import_questions): the dataset
  schema of boolbench.generation.dataset; source "imported", split from the file (else test), the
  recorded Boolean expression when the file has one (another boolbench run's dataset), `group`
  the question's row (it only spreads the decomposition over llm.shards jobs).
- tables/table1.{csv,md,html} of such a corpus: questions, avg_pos, avg_neg per type and split.
- released/eval.jsonl, released/corpus.jsonl and released/README.md (rule export_released):
  our dataset in the released layout, for code written for the released files, and its dataset
  card (boolbench.dataset_card).
"""

from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from boolbench.dataset_card import write_card
from boolbench.errors import InputError, json_problem, located
from boolbench.generation.dataset import DATASET_COLUMNS, DATASET_SCHEMA, TYPES
from boolbench.io import atomic_path, write_table_atomic, write_text_atomic
from boolbench.labels import LABEL_COLUMNS, overlap, with_pooled

log = logging.getLogger(__name__)

PathLike = str | os.PathLike
RELEASED_FIELDS = ("qid", "question", "question_type", "positive_ctxs", "negative_ctxs")
# Our exports' pooled judgements: field -> dataset column (optional when reading).
POOLED_FIELDS = {
    "pooled_positive_ctxs": "pooled_positives",
    "pooled_negative_ctxs": "pooled_negatives",
}
BOOLBENCH_REQUIRED = ("qid", "type", "question", "positives", "negatives")
SPLITS = ("train", "test")
MISSING_SHOWN = 5  # passage ids named in the error about passages missing from the corpus


@dataclass(frozen=True)
class QuestionFacts:
    """What the workflow plans from a question file: which baselines can be computed."""

    layout: str  # released, boolbench or beir
    has_train: bool  # a train split: contrastive training is possible
    has_expressions: bool  # recorded Boolean expressions: the oracle baseline is possible


def layout_of(path: PathLike) -> str:
    path = Path(path)
    if path.is_dir():
        return "beir"
    if path.suffix == ".parquet":
        names = _parquet(path).schema_arrow.names
        return "boolbench" if "positives" in names else "released"
    return "released"


def question_facts(path: PathLike) -> QuestionFacts:
    """Facts for planning, read leniently: a file that cannot be read gives no train split and
    no expressions here, and its import job then fails with the exact problem."""
    try:
        layout = layout_of(path)
        if layout == "boolbench":
            columns = set(_parquet(path).schema_arrow.names)
            table = pq.read_table(
                path, columns=[c for c in ("split", "operand_texts") if c in columns]
            )
            has_train = "split" in columns and "train" in table.column("split").to_pylist()
            has_expressions = "operand_texts" in columns and any(
                len(v or []) for v in table.column("operand_texts").to_pylist()
            )
            return QuestionFacts(layout, has_train, has_expressions)
        frame = read_questions(path)
        return QuestionFacts(layout, bool((frame["split"] == "train").any()), False)
    except Exception:  # the import job reports the problem with its file and row
        return QuestionFacts("unknown", False, False)


def _parquet(path: Path) -> pq.ParquetFile:
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise InputError(located(path, f"not a readable Parquet file ({err})")) from None


# ---------------------------------------------------------------------------------------------
# Reading: every reader returns one row per question with qid, question, type (as written),
# positives, negatives, pooled_positives, pooled_negatives (lists of pid strings), split (None
# when the file has none), `at` (the line or row, for error messages), and for boolbench
# datasets the expression columns.


def read_questions(path: PathLike) -> pd.DataFrame:
    """The raw questions of a file or BEIR folder, in file order (unchecked types and pids)."""
    path = Path(path)
    if not path.exists():
        raise InputError(located(path, "questions file not found"))
    layout = layout_of(path)
    if layout == "beir":
        return _read_beir(path)
    if layout == "boolbench":
        return _read_boolbench(path)
    if path.suffix == ".parquet":
        records = _parquet(path).read().to_pylist()
        return _released_frame(path, [(i, r) for i, r in enumerate(records, 1)], "row")
    return _released_frame(path, *_json_records(path))


def _json_records(path: Path) -> tuple[list[tuple[int, object]], str]:
    """(location, record) pairs of JSON lines (by line) or of one JSON array (by row)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(located(path, f"undecodable bytes (not UTF-8) ({err.reason})")) from None
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as err:
            raise InputError(located(path, json_problem(err), line=err.lineno)) from None
        return list(enumerate(records, 1)), "row"
    records = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append((lineno, json.loads(line)))
        except json.JSONDecodeError as err:
            raise InputError(located(path, json_problem(err), line=lineno)) from None
    return records, "line"


def _where(path: Path, kind: str, loc: int):
    return lambda problem: InputError(located(path, problem, **{kind: loc}))


def _passage_ids(value, field: str, fail) -> list[str]:
    """The passage_id of each object of a positive_ctxs / negative_ctxs list."""
    if value is None or isinstance(value, str | bytes | dict) or not hasattr(value, "__iter__"):
        raise fail(f"{field} is not a list of objects with a passage_id")
    pids = []
    for item in value:
        if not isinstance(item, dict) or item.get("passage_id") is None:
            raise fail(f"{field} holds {item!r}, not an object with a passage_id")
        pids.append(str(item["passage_id"]))
    return pids


def _released_frame(path: Path, records: list[tuple[int, object]], kind: str) -> pd.DataFrame:
    rows = []
    for loc, record in records:
        fail = _where(path, kind, loc)
        if not isinstance(record, dict):
            raise fail("expected a JSON object (one question)")
        missing = [f for f in RELEASED_FIELDS if f not in record]
        if missing:
            raise fail(
                f"missing field(s) {', '.join(map(repr, missing))}; the record has "
                f"{sorted(record)} (expected the released BoolQuestions layout: "
                f"{', '.join(RELEASED_FIELDS)})"
            )
        rows.append(
            {
                "qid": None if record["qid"] is None else str(record["qid"]),
                "question": record["question"],
                "type": record["question_type"],
                "positives": _passage_ids(record["positive_ctxs"], "positive_ctxs", fail),
                "negatives": _passage_ids(record["negative_ctxs"], "negative_ctxs", fail),
                **{
                    column: _passage_ids(record.get(field) or [], field, fail)
                    for field, column in POOLED_FIELDS.items()
                },
                "split": record.get("split"),
                "at": (kind, loc),
            }
        )
    return pd.DataFrame(rows, columns=[*_RAW_COLUMNS])


_RAW_COLUMNS = ("qid", "question", "type", *LABEL_COLUMNS, "split", "at")
_EXPRESSION_COLUMNS = (
    "operator", "operand_qids", "operand_texts", "group", "cluster", "prompt_hash", "model"
)  # fmt: skip


def _read_boolbench(path: Path) -> pd.DataFrame:
    """boolquestions.parquet (or boolquestions_all.parquet: its kept rows) of another run."""
    names = _parquet(path).schema_arrow.names
    missing = [c for c in BOOLBENCH_REQUIRED if c not in names]
    if missing:
        raise InputError(
            located(path, f"missing column(s) {', '.join(map(repr, missing))}; it has {names}")
        )
    frame = pq.read_table(path).to_pandas()
    frame["at"] = [("row", i) for i in range(1, len(frame) + 1)]
    if "kept" in frame:
        frame = frame[frame["kept"].fillna(False).astype(bool)]
    frame = with_pooled(frame)
    for column in (*LABEL_COLUMNS, "operand_qids", "operand_texts"):
        if column in frame:
            # an operand that was never written stays None (the oracle skips such expressions)
            keep_none = column == "operand_texts"
            frame[column] = [
                [] if v is None else [None if p is None and keep_none else str(p) for p in v]
                for v in frame[column]
            ]
    if "split" not in frame:
        frame["split"] = None
    return frame[[c for c in frame.columns if c in (*_RAW_COLUMNS, *_EXPRESSION_COLUMNS)]]


BEIR_SUFFIXES = ("_group", "_negatives")  # qrels/{split}{suffix}.tsv; "" is the completed labels


def _read_beir(folder: Path) -> pd.DataFrame:
    """A BEIR folder as boolbench exports it: queries.jsonl (metadata: type, split) and per
    split qrels/{split}.tsv (the completed labels: above 0 relevant, 0 judged not relevant),
    qrels/{split}_group.tsv (the group labels) and qrels/{split}_negatives.tsv (the
    construction negatives). Without _group files (an export made before pooling, or another
    BEIR folder) the positives are {split}.tsv's rows above 0, and its rows at 0 that are not
    construction negatives read as pooled negatives (judged, not relevant)."""
    queries_path = folder / "queries.jsonl"
    if not queries_path.exists():
        raise InputError(located(folder, "a BEIR folder needs queries.jsonl"))
    records, kind = _json_records(queries_path)
    qrels: dict[str, dict[str, list[tuple[str, int]]]] = {s: {} for s in ("", *BEIR_SUFFIXES)}
    qrel_split: dict[str, str] = {}
    for path in sorted((folder / "qrels").glob("*.tsv")):
        suffix = next((x for x in BEIR_SUFFIXES if path.stem.endswith(x)), "")
        split = path.stem.removesuffix(suffix) if suffix else path.stem
        for qid, pid, score in _beir_qrels(path):
            qrels[suffix].setdefault(qid, []).append((pid, score))
            qrel_split.setdefault(qid, split)
    has_group = bool(qrels["_group"])
    rows = []
    for loc, record in records:
        fail = _where(queries_path, kind, loc)
        if not isinstance(record, dict) or "_id" not in record or "text" not in record:
            raise fail("expected a JSON object with _id and text")
        qid = str(record["_id"])
        metadata = record.get("metadata") or {}
        completed = qrels[""].get(qid, [])
        group = qrels["_group"].get(qid, []) if has_group else completed
        positives = [p for p, score in group if score > 0]
        negatives = [p for p, score in qrels["_negatives"].get(qid, []) if score > 0]
        if not negatives and has_group:
            negatives = [p for p, score in group if score <= 0]
        rows.append(
            {
                "qid": qid,
                "question": record["text"],
                "type": metadata.get("type"),
                "positives": positives,
                "negatives": negatives,
                "pooled_positives": [
                    p for p, score in completed if score > 0 and p not in set(positives)
                ],
                "pooled_negatives": [
                    p for p, score in completed if score <= 0 and p not in set(negatives)
                ],
                "split": metadata.get("split", qrel_split.get(qid)),
                "at": (kind, loc),
            }
        )
    frame = pd.DataFrame(rows, columns=[*_RAW_COLUMNS])
    frame.attrs["path"] = str(queries_path)
    return frame


def _beir_qrels(path: Path):
    with open(path, encoding="utf-8") as handle:
        for lineno, line in enumerate(handle, 1):
            parts = line.rstrip("\n").split("\t")
            if lineno == 1 and parts[:2] == ["query-id", "corpus-id"]:
                continue
            if len(parts) != 3:
                raise InputError(
                    located(
                        path, f"expected query-id, corpus-id, score; found {parts}", line=lineno
                    )
                )
            try:
                yield parts[0], parts[1], int(parts[2])
            except ValueError:
                raise InputError(
                    located(path, f"score {parts[2]!r} is not an integer", line=lineno)
                ) from None


# ---------------------------------------------------------------------------------------------
# Checking and normalising into the dataset schema.


def _normalise(path: Path, raw: pd.DataFrame) -> pd.DataFrame:
    """The dataset schema of boolbench.generation.dataset from raw questions; one error per bad
    row."""
    seen: dict[str, tuple] = {}
    types, splits = [], []
    for row in raw.itertuples(index=False):
        kind, loc = row.at
        fail = _where(path, kind, loc)
        if row.qid is None or not str(row.qid).strip():
            raise fail("empty qid")
        if row.qid in seen:
            raise fail(
                f"duplicate qid {row.qid!r} (first at {seen[row.qid][0]} {seen[row.qid][1]})"
            )
        seen[row.qid] = row.at
        if not isinstance(row.question, str) or not row.question.strip():
            raise fail(f"question {row.qid}: empty question text")
        kind_name = str(row.type).strip().upper() if isinstance(row.type, str) else None
        if kind_name not in TYPES:
            shown = None if isinstance(row.type, float) and math.isnan(row.type) else row.type
            raise fail(
                f"question {row.qid}: unknown question type {shown!r} "
                f"(expected {', '.join(t.lower() for t in TYPES)})"
            )
        types.append(kind_name)
        if len(row.positives) == 0:
            raise fail(f"question {row.qid}: no positive passage")
        problem = overlap(row._asdict())
        if problem:
            raise fail(f"question {row.qid}: {problem} (a passage has one label)")
        split = row.split if isinstance(row.split, str) and row.split else None
        if split is not None and split not in SPLITS:
            raise fail(f"question {row.qid}: split {row.split!r} is not train or test")
        splits.append(split or "test")
    frame = raw.assign(type=types, split=splits, source="imported")
    n = len(frame)
    defaults = {
        "operator": [None] * n,
        "operand_qids": [[] for _ in range(n)],
        "operand_texts": [[] for _ in range(n)],
        "group": range(n),
        "cluster": [-1] * n,
        "prompt_hash": [None] * n,
        "model": [None] * n,
    }
    for column, values in defaults.items():
        if column not in frame:
            frame[column] = list(values)
    frame["group"] = frame["group"].astype("int64")
    frame["cluster"] = frame["cluster"].fillna(-1).astype("int64")
    return frame.reset_index(drop=True)


def _check_passages(path: Path, frame: pd.DataFrame, corpus_path: PathLike) -> None:
    """Every labelled passage is in the corpus; else one error with the count and a few ids."""
    labelled = pa.array(
        sorted({p for column in LABEL_COLUMNS for ps in frame[column] for p in ps}),
        pa.string(),
    )
    corpus_pids = pq.read_table(corpus_path, columns=["pid"]).column("pid")
    found = set(corpus_pids.filter(pc.is_in(corpus_pids, value_set=labelled)).to_pylist())
    missing = [p for p in labelled.to_pylist() if p not in found]
    if not missing:
        return
    first = next(
        row
        for row in frame.itertuples(index=False)
        if any(p not in found for column in LABEL_COLUMNS for p in getattr(row, column))
    )
    kind, loc = first.at
    shown = ", ".join(repr(p) for p in missing[:MISSING_SHOWN])
    raise InputError(
        located(
            path,
            f"{len(missing)} labelled passage id(s) are not in the corpus ({shown}"
            f"{', ...' if len(missing) > MISSING_SHOWN else ''}; the first in question "
            f"{first.qid}, {kind} {loc}): is the corpus entry's `path` the matching corpus?",
        )
    )


def import_questions(path: PathLike, corpus_path: PathLike) -> pd.DataFrame:
    """The questions of a file or BEIR folder as dataset rows (DATASET_COLUMNS), checked
    against corpus.parquet."""
    path = Path(path)
    raw = read_questions(path)
    where = Path(raw.attrs.get("path", path))
    if raw.empty:
        raise InputError(located(where, "holds no questions"))
    frame = _normalise(where, raw)
    _check_passages(where, frame, corpus_path)
    return frame[DATASET_COLUMNS]


def import_step(questions_path: PathLike, corpus_path: PathLike, out: PathLike) -> None:
    """boolquestions.parquet of a corpus with `questions:`."""
    frame = import_questions(questions_path, corpus_path)
    write_table_atomic(
        pa.Table.from_pandas(frame, schema=DATASET_SCHEMA, preserve_index=False), out
    )
    counts = frame.groupby(["split", "type"]).size().to_dict()
    log.info("imported %d questions from %s: %s", len(frame), questions_path, counts)


# ---------------------------------------------------------------------------------------------
# Table 1 of imported questions.


def question_table(questions: pd.DataFrame) -> pd.DataFrame:
    """The paper's Table 1 (questions, avg_pos, avg_neg per type and ALL), with train and test
    counts."""
    rows = []
    for kind in ("ALL", *TYPES):
        part = questions if kind == "ALL" else questions[questions["type"] == kind]
        rows.append(
            {
                "type": kind,
                "questions": len(part),
                "avg_pos": part["positives"].map(len).mean() if len(part) else float("nan"),
                "avg_neg": part["negatives"].map(len).mean() if len(part) else float("nan"),
                "train": int((part["split"] == "train").sum()),
                "test": int((part["split"] == "test").sum()),
            }
        )
    return pd.DataFrame(rows)


def question_statistics_step(questions_path: PathLike, out: dict[str, str]) -> None:
    """tables/table1.{csv,md,html} of imported questions."""
    from boolbench.generation.dataset import write_table1

    notes = [
        "questions, avg_pos, avg_neg: the paper's Table 1 for the imported questions (positive "
        "and labelled negative passages per question); train, test: questions per split "
        "(test when the file gives none). Generation counts do not apply: nothing was generated.",
    ]
    table = question_table(pd.read_parquet(questions_path))
    write_table1(table, out["csv"], out["md"], out["html"], notes)


# ---------------------------------------------------------------------------------------------
# Export in the released layout.


def released_records(questions: pd.DataFrame):
    """One released-layout record per question (with our split and the pooled judgements in
    fields of their own, which code written for the released files ignores)."""
    for row in with_pooled(questions).itertuples(index=False):
        yield {
            "qid": row.qid,
            "question": row.question,
            "question_type": row.type.lower(),
            "positive_ctxs": [{"passage_id": p} for p in row.positives],
            "negative_ctxs": [{"passage_id": p} for p in row.negatives],
            **{
                field: [{"passage_id": p} for p in getattr(row, column)]
                for field, column in POOLED_FIELDS.items()
            },
            "split": row.split,
        }


def _json_lines(records) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def export_released(
    questions_path: PathLike, corpus_path: PathLike, out: dict[str, str], card: dict
) -> None:
    """released/eval.jsonl (the questions), released/corpus.jsonl (docid, doc, and title
    when the corpus has titles), as datasets' to_json writes them, and released/README.md (the
    dataset card; `card`: the settings of boolbench.dataset_card.write_card)."""
    questions = pd.read_parquet(questions_path)
    write_text_atomic(out["eval"], _json_lines(released_records(questions)))
    write_card(questions, "released", card, out["card"], corpus_path)
    parquet = pq.ParquetFile(corpus_path)
    titled = pc.any(pc.is_valid(pq.read_table(corpus_path, columns=["title"]).column("title")))
    with_title = bool(titled.as_py())
    with atomic_path(out["corpus"]) as temp, open(temp, "w", encoding="utf-8") as handle:
        for batch in parquet.iter_batches(columns=["pid", "text", "title"]):
            pids, texts, titles = (batch.column(i).to_pylist() for i in range(3))
            for pid, text, title in zip(pids, texts, titles, strict=True):
                record = {"docid": pid, "doc": text}
                if with_title:
                    record["title"] = title or ""
                handle.write(json.dumps(record, ensure_ascii=False) + "\n")
