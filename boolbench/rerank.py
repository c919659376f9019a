"""Cross-encoder re-ranking of another model's run (the DRC paper's second stage)."""

from __future__ import annotations

import logging

import pandas as pd

from boolbench.encoding import resolve_model
from boolbench.errors import InputError
from boolbench.runs import rank_hits

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
            resolve_model(spec.model), max_length=spec.max_seq_length, device=device
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
