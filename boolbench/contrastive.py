"""Boolean contrastive continual training (paper section 6.3) of a sentence-transformers model.

The train split's Boolean questions of one type (or all types) become (question, positive
passage, labelled negative passage) triplets; questions without a negative become (question,
positive) pairs; ordinary pairs (simple question -> its passage, from the train groups) are
mixed in. The loss is MultipleNegativesRankingLoss: in-batch negatives plus the labelled hard
negative. Artifact: models/contrastive-{subset}/model/, a saved SentenceTransformer.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from boolbench.retrievers import ModelSpec, load_sentence_transformer

log = logging.getLogger(__name__)
SUBSETS = ("and", "or", "not", "all")


@dataclass(frozen=True)
class TrainingSettings:
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


def training_examples(
    questions: pd.DataFrame,
    simple: pd.DataFrame | None,
    passages: dict[str, str],
    subset: str,
    spec: ModelSpec,
    simple_pairs: bool = True,
) -> dict[str, pd.DataFrame]:
    """{"triplets": anchor/positive/negative, "pairs": anchor/positive} from the train split;
    `simple` None (imported questions have no simple questions) mixes in no ordinary pairs."""
    train = questions[questions["split"] == "train"]
    if subset != "all":
        train = train[train["type"] == subset.upper()]
    q, p = spec.query_prefix, spec.passage_prefix
    triplets, pairs = [], []
    for row in train.itertuples(index=False):
        for positive in row.positives:
            if len(row.negatives):
                triplets += [
                    (q + row.question, p + passages[positive], p + passages[negative])
                    for negative in row.negatives
                ]
            else:
                pairs.append((q + row.question, p + passages[positive]))
    if simple_pairs and simple is not None:
        groups = set(train["group"])
        usable = simple[simple["group"].isin(groups) & simple["question"].notna()]
        pairs += [
            (q + s, p + passages[pid]) for s, pid in zip(usable.question, usable.pid, strict=True)
        ]
    examples = {
        "triplets": pd.DataFrame(triplets, columns=["anchor", "positive", "negative"]),
        "pairs": pd.DataFrame(pairs, columns=["anchor", "positive"]),
    }
    return {name: frame for name, frame in examples.items() if len(frame)}


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
    out_dir = Path(out_dir)
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
    temp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    shutil.rmtree(temp, ignore_errors=True)
    model.save(str(temp))
    shutil.rmtree(out_dir, ignore_errors=True)
    os.replace(temp, out_dir)


def contrastive_label(model: str) -> str:
    """Table 3's row of a contrastive model (contrastive-not -> Boolean contrastive (NOT))."""
    subset = model.removeprefix("contrastive-")
    return f"Boolean contrastive ({'all' if subset == 'all' else subset.upper()})"
