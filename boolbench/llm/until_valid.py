"""The one engine of every LLM step: ask a batch, check each reply, ask the invalid ones again
under the next seed, and record why the last attempt failed.

Question writing (boolbench.generation.questions), the decomposition baseline
(boolbench.baselines.decompose) and the answerer (boolbench.generation.filtering, no retries: its
replies are verdicts) all ask through `ask_until_valid`; what differs is the request and the
check.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from boolbench.llm.client import ChatRequest, ChatResult, LLMClient

FAILED = "llm_failed"  # the reason of a key whose last call failed (no reply to check)


@dataclass(frozen=True)
class Answer:
    """What asking until valid got for one key: the checked value, or why the last attempt was
    invalid (FAILED: the call itself failed)."""

    value: object | None
    reason: str | None
    attempts: int


def ask_until_valid(
    llm: LLMClient,
    keys: Sequence[Hashable],
    request: Callable[[Hashable, int], ChatRequest],
    check: Callable[[Hashable, ChatResult], tuple[object, str | None]],
    retries: int = 0,
) -> dict[Hashable, Answer]:
    """Ask for every key (`request(key, attempt)`, in `keys` order: callers order them for the
    server's prompt cache); `check(key, result)` of a successful call gives (value, None) or
    (_, reason). Invalid replies are asked again, up to `retries` more times (requests vary the
    seed with the attempt). One batch per attempt, so every call of an attempt runs at once.
    A batch with too many failed calls stops here (LLMClient.check_failures)."""
    answers: dict[Hashable, Answer] = {}
    reasons: dict[Hashable, str] = {}
    pending = list(keys)
    for attempt in range(retries + 1):
        if not pending:
            break
        results = llm.run([request(key, attempt) for key in pending])
        llm.check_failures(results)
        still_pending = []
        for key, result in zip(pending, results, strict=True):
            value, reason = check(key, result) if result.ok else (None, FAILED)
            if reason is None:
                answers[key] = Answer(value, None, attempt + 1)
            else:
                reasons[key] = reason
                still_pending.append(key)
        pending = still_pending
    for key in pending:
        answers[key] = Answer(None, reasons[key], retries + 1)
    return answers
