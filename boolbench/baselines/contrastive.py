"""Boolean contrastive continual training (paper section 6.3) of a sentence-transformers model.

The train split's Boolean questions of one type (or all types) become (question, positive
passage, labelled negative passage) triplets; questions without a negative become (question,
positive) pairs; ordinary pairs (simple question -> its passage, from the train groups) are
mixed in. The loss is MultipleNegativesRankingLoss: in-batch negatives plus the labelled hard
negative. Artifact: models/contrastive-{subset}/model/, a saved SentenceTransformer.

Two ways (`side`):
- query (default): only the query encoder learns; passages keep the base model's vectors (read
  from its embeddings file, so the corpus is never re-encoded and the base index serves the
  trained model). The Boolean logic is in the question, not in the passages.
- both (the paper): the whole model learns (SentenceTransformerTrainer), and the trained model
  re-encodes the corpus.
"""

from __future__ import annotations

import logging
import os
import tempfile
from dataclasses import dataclass

import numpy as np
import pandas as pd

from boolbench.io import atomic_path
from boolbench.retrieval.encoders import load_sentence_transformer
from boolbench.retrieval.registry import ModelSpec

log = logging.getLogger(__name__)
SCALE = 20.0  # MultipleNegativesRankingLoss's default: cosine similarities times 20


@dataclass(frozen=True)
class TrainingSettings:
    side: str = "query"
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 2e-5
    warmup_ratio: float = 0.1
    simple_pairs: bool = True
    max_steps: int | None = None  # None: run the epochs
    seed: int = 13

    @classmethod
    def from_config(cls, section: dict, seed: int) -> TrainingSettings:
        keys = cls.__dataclass_fields__
        return cls(**{k: v for k, v in section.items() if k in keys}, seed=seed)


def training_rows(
    questions: pd.DataFrame, simple: pd.DataFrame | None, subset: str, simple_pairs: bool = True
) -> pd.DataFrame:
    """One row per (anchor, positive pid, negative pid or None) of the train split, with all
    positives of the anchor (`positives`, so that none is used as another row's negative);
    `simple` None (imported questions have no simple questions) mixes in no ordinary pairs."""
    train = questions[questions["split"] == "train"]
    if subset != "all":
        train = train[train["type"] == subset.upper()]
    rows = []
    for row in train.itertuples(index=False):
        positives = tuple(row.positives)
        negatives = list(row.negatives) or [None]
        rows += [(row.question, p, n, positives) for p in positives for n in negatives]
    if simple_pairs and simple is not None:
        groups = set(train["group"])
        usable = simple[simple["group"].isin(groups) & simple["question"].notna()]
        rows += [(s, pid, None, (pid,)) for s, pid in zip(usable.question, usable.pid, strict=True)]
    return pd.DataFrame(rows, columns=["anchor", "positive", "negative", "positives"])


def training_examples(
    questions: pd.DataFrame,
    simple: pd.DataFrame | None,
    passages: dict[str, str],
    subset: str,
    spec: ModelSpec,
    simple_pairs: bool = True,
) -> dict[str, pd.DataFrame]:
    """{"triplets": anchor/positive/negative, "pairs": anchor/positive} texts (side both)."""
    rows = training_rows(questions, simple, subset, simple_pairs)
    q, p = spec.query_prefix, spec.passage_prefix
    triplets = [
        (q + r.anchor, p + passages[r.positive], p + passages[r.negative])
        for r in rows.itertuples(index=False)
        if pd.notna(r.negative)
    ]
    pairs = [
        (q + r.anchor, p + passages[r.positive])
        for r in rows.itertuples(index=False)
        if pd.isna(r.negative)
    ]
    examples = {
        "triplets": pd.DataFrame(triplets, columns=["anchor", "positive", "negative"]),
        "pairs": pd.DataFrame(pairs, columns=["anchor", "positive"]),
    }
    return {name: frame for name, frame in examples.items() if len(frame)}


def train_query_encoder(
    spec: ModelSpec,
    rows: pd.DataFrame,
    passage_vectors: dict[str, np.ndarray],
    settings: TrainingSettings,
    out_dir: str | os.PathLike,
    threads: int | None = None,
) -> dict:
    """Continue training `spec`'s model as a query encoder against fixed passage vectors (the
    base model's) and save it to `out_dir` (whole or not at all). The loss is that of
    MultipleNegativesRankingLoss: each anchor against every passage of its batch (the batch's
    positives and labelled negatives), its other positives left out. Returns a summary."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    if rows.empty:
        raise ValueError("no training examples")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    model = load_sentence_transformer(spec)  # with its revision, remote code and kwargs
    prefix = model.prompts.get(spec.query_prompt_name, "") if spec.query_prompt_name else ""
    prefix = prefix or spec.query_prefix
    pids = sorted({*rows["positive"], *rows["negative"].dropna()})
    column = {pid: i for i, pid in enumerate(pids)}
    vectors = torch.nn.functional.normalize(
        torch.from_numpy(np.stack([passage_vectors[pid] for pid in pids]).astype(np.float32)),
        dim=1,
    ).to(model.device)
    batches_per_epoch = -(-len(rows) // settings.batch_size)
    steps = settings.max_steps or settings.epochs * batches_per_epoch
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.learning_rate)
    schedule = get_linear_schedule_with_warmup(optimizer, int(settings.warmup_ratio * steps), steps)
    log.info("training the query side of %s: %d rows, %d steps", spec.model, len(rows), steps)
    model.train()
    order, losses = [], []
    for _ in range(steps):
        if len(order) < settings.batch_size:
            order += list(rng.permutation(len(rows)))
        batch = rows.iloc[order[: settings.batch_size]]
        order = order[settings.batch_size :]
        candidates, target, masked = batch_layout(batch)
        mask = torch.zeros(len(batch), len(candidates), dtype=torch.bool)
        for row, col in masked:
            mask[row, col] = True
        anchors = batch["anchor"].tolist()
        if hasattr(model, "preprocess"):  # sentence-transformers >= 6, as its encode does
            features = model.preprocess(anchors, prompt=prefix or None)
        else:
            features = model.tokenize([prefix + a for a in anchors])
        features = {
            k: v.to(model.device) if isinstance(v, torch.Tensor) else v for k, v in features.items()
        }
        queries = torch.nn.functional.normalize(model(features)["sentence_embedding"], dim=1)
        scores = SCALE * queries @ vectors[[column[pid] for pid in candidates]].T
        scores = scores.masked_fill(mask.to(model.device), float("-inf"))
        loss = torch.nn.functional.cross_entropy(scores, torch.tensor(target, device=model.device))
        loss.backward()
        optimizer.step()
        schedule.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    model.eval()
    _save(model, out_dir)
    first, last = losses[:batches_per_epoch], losses[-batches_per_epoch:]
    summary = {"rows": len(rows), "steps": steps, "loss_first": float(np.mean(first)),
               "loss_last": float(np.mean(last))}  # fmt: skip
    log.info("query side trained: %s", summary)
    return summary


def batch_layout(batch: pd.DataFrame) -> tuple[list[str], list[int], list[tuple[int, int]]]:
    """The passages a batch scores every anchor against (the batch's positives and labelled
    negatives), each row's target among them, and the (row, passage) pairs left out of the
    loss: an anchor's other positives are not its negatives."""
    candidates = sorted({*batch["positive"], *batch["negative"].dropna()})
    position = {pid: i for i, pid in enumerate(candidates)}
    target = [position[pid] for pid in batch["positive"]]
    masked = [
        (row, position[other])
        for row, (positive, positives) in enumerate(
            zip(batch["positive"], batch["positives"], strict=True)
        )
        for other in positives
        if other != positive and other in position
    ]
    return candidates, target, masked


def _save(model, out_dir: str | os.PathLike) -> None:
    """Save a SentenceTransformer to `out_dir`, replacing it whole or not at all."""
    with atomic_path(out_dir) as temp:
        model.save(str(temp))


def train(
    spec: ModelSpec,
    examples: dict[str, pd.DataFrame],
    settings: TrainingSettings,
    out_dir: str | os.PathLike,
    threads: int | None = None,
) -> None:
    """Continue training `spec`'s model on the examples and save it to `out_dir` (whole or not
    at all). Uses a GPU when one is present."""
    import torch
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
    from sentence_transformers.sentence_transformer.training_args import BatchSamplers

    if not examples:
        raise ValueError("no training examples")
    if threads:
        torch.set_num_threads(threads)
    torch.manual_seed(settings.seed)
    model = load_sentence_transformer(spec)  # with its revision, remote code and kwargs
    datasets = {name: Dataset.from_pandas(frame) for name, frame in examples.items()}
    log.info(
        "training %s on %s",
        spec.model,
        ", ".join(f"{len(f)} {name}" for name, f in examples.items()),
    )
    with tempfile.TemporaryDirectory(prefix="boolbench-train-") as scratch:
        args = SentenceTransformerTrainingArguments(
            output_dir=scratch,
            num_train_epochs=settings.epochs,
            max_steps=settings.max_steps or -1,
            per_device_train_batch_size=settings.batch_size,
            learning_rate=settings.learning_rate,
            warmup_ratio=settings.warmup_ratio,
            seed=settings.seed,
            data_seed=settings.seed,
            batch_sampler=BatchSamplers.NO_DUPLICATES,
            logging_steps=5,
            save_strategy="no",
            report_to="none",
        )
        trainer = SentenceTransformerTrainer(
            model=model,
            args=args,
            train_dataset=datasets,
            loss=MultipleNegativesRankingLoss(model),
        )
        trainer.train()
    _save(model, out_dir)
