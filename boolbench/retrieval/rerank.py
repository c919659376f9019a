"""Cross-encoder re-ranking of another model's run (the DRC paper's second stage)."""

from __future__ import annotations

import logging

import pandas as pd

from boolbench.errors import InputError
from boolbench.retrieval.embeddings import resolve_model
from boolbench.retrieval.runs import rank_hits

log = logging.getLogger(__name__)


def load_cross_encoder(spec, threads: int | None = None):
    """A sentence-transformers CrossEncoder; a load failure is one error naming the model."""
    try:
        import torch
        from sentence_transformers import CrossEncoder

        if threads:
            torch.set_num_threads(threads)
        device = None if spec.device == "auto" else spec.device
        return CrossEncoder(
            resolve_model(spec.model),
            max_length=spec.max_seq_length,
            device=device,
            **spec.hub_kwargs(CrossEncoder),
        )
    except Exception as err:  # missing files, bad weights, no hub access
        raise InputError(
            f"models.{spec.name}: could not load cross-encoder {spec.model}: "
            f"{type(err).__name__}: {err}"
        ) from err


def rerank(
    base_run: pd.DataFrame,
    queries: dict[str, str],
    passages: dict[str, str],
    model,
    depth: int,
    batch_size: int = 32,
) -> pd.DataFrame:
    """Score the top `depth` passages of each query of `base_run` with the cross-encoder.

    The re-ranked run holds those passages only, in the cross-encoder's order (ties: runs' rule).
    """
    top = base_run[base_run["rank"] <= depth]
    qid_order = list(dict.fromkeys(top["qid"]))
    if top.empty:
        return rank_hits(pd.DataFrame(), qid_order, depth)
    pairs = [(queries[q], passages[p]) for q, p in zip(top["qid"], top["pid"], strict=True)]
    scores = model.predict(
        pairs, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=len(pairs) > 5000
    )
    hits = pd.DataFrame({"qid": top["qid"].to_numpy(), "pid": top["pid"].to_numpy()})
    hits["score"] = scores.astype("float64")
    return rank_hits(hits, qid_order, depth)


def rerank_document_run(
    base_run: pd.DataFrame,
    queries: dict[str, str],
    passages: dict[str, str],
    model,
    depth: int,
    batch_size: int = 32,
) -> pd.DataFrame:
    """Re-rank a document-scoped run to `depth`; the passages below keep the base order after
    the re-ranked ones, so the run still ranks the whole document.

    Those passages get scores below the query's lowest re-ranked score (minus their distance
    below the depth), so that ordering by score, as trec_eval does, gives the same ranks.
    """
    head = rerank(base_run, queries, passages, model, depth, batch_size)
    tail = base_run[base_run["rank"] > depth]
    if tail.empty:
        return head
    floor = head.groupby("qid")["score"].min()
    tail = tail.assign(score=tail["qid"].map(floor) - (tail["rank"] - depth).astype("float64"))
    hits = pd.concat([head, tail], ignore_index=True)[["qid", "pid", "score"]]
    return rank_hits(hits, list(dict.fromkeys(base_run["qid"])), int(base_run["rank"].max()))
