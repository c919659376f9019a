"""Files in the released BoolQuestions layout, built from the embedded Wikipedia articles (the
hub cannot be reached here): a corpus (docid, doc, title, as NaturalQuestions-corpus) and
seeded AND/OR/NOT questions (qid, question, question_type, positive_ctxs, negative_ctxs, as the
`eval` split), written by `datasets` itself (to_json: JSON lines; to_parquet).

Questions are made from each article's short description, within one of the articles' topics:
- AND "What is <description of A> and <title of A>?": A positive, B (same topic) negative;
- OR "What is <description of A> or what is <description of B>?": A and B positive, a third
  article of the topic negative for every third question;
- NOT "What is <description of A> but not <title of B>?": A positive, B negative.
"""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd

from boolbench.corpus.sources import IngestReport, SourceSpec, iter_passages, original_queries


def wikipedia_articles(limit: int | None) -> pd.DataFrame:
    """pid, title, text, description (None for the few articles without one) and topic of the
    first `limit` embedded articles (the passages a `vital_articles` corpus with that limit
    ingests)."""
    from boolbench.corpus.sources import _load_vital_articles, vital_articles_path

    spec = SourceSpec(source="vital_articles", limit=limit)
    passages = pd.concat(list(iter_passages(spec, IngestReport())), ignore_index=True)
    queries, _ = original_queries(spec)
    descriptions = dict(zip(queries["qid"], queries["text"], strict=True))
    topics = {
        a["key"].replace(" ", "_"): a.get("topic") or "general"
        for a in _load_vital_articles(vital_articles_path())
    }
    return passages.assign(
        description=passages["pid"].map(descriptions), topic=passages["pid"].map(topics)
    )[["pid", "title", "text", "description", "topic"]]


def released_questions(articles: pd.DataFrame, n: int, seed: int) -> list[dict]:
    """`n` questions (AND, OR, NOT in turn) in the released eval layout; qids q0, q1, ..."""
    rng = random.Random(seed)
    described = articles[articles["description"].notna()]
    by_topic = {t: list(group.itertuples(index=False)) for t, group in described.groupby("topic")}
    topics = sorted(t for t, group in by_topic.items() if len(group) >= 3)
    records = []
    for i in range(n):
        a, b, c = rng.sample(by_topic[rng.choice(topics)], 3)
        kind = ("and", "or", "not")[i % 3]
        what = a.description.rstrip(".")
        if kind == "and":
            question, positives, negatives = f"What is {what} and {a.title}?", [a], [b]
        elif kind == "or":
            question = f"What is {what} or what is {b.description.rstrip('.')}?"
            positives, negatives = [a, b], ([c] if i % 9 == 1 else [])
        else:
            question, positives, negatives = f"What is {what} but not {b.title}?", [a], [b]
        records.append(
            {
                "qid": f"q{i}",
                "question": question,
                "question_type": kind,
                "positive_ctxs": [{"passage_id": p.pid} for p in positives],
                "negative_ctxs": [{"passage_id": p.pid} for p in negatives],
            }
        )
    return records


def released_corpus(articles: pd.DataFrame) -> list[dict]:
    return [
        {"docid": r.pid, "doc": r.text, "title": r.title} for r in articles.itertuples(index=False)
    ]


def write_with_datasets(records: list[dict], path: Path) -> Path:
    """Write records as `datasets` does: to_parquet for .parquet, else to_json (JSON lines)."""
    from datasets import Dataset

    path.parent.mkdir(parents=True, exist_ok=True)
    dataset = Dataset.from_list(records)
    if path.suffix == ".parquet":
        dataset.to_parquet(str(path))
    else:
        dataset.to_json(str(path))
    return path
