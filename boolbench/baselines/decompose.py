"""LLM decomposition of Boolean questions into Boolean expressions of simple questions
(paper section 6.3, "Boolean operation on decomposed query").

Artifact baselines/decomposed.parquet, DECOMPOSED_SCHEMA: qid, type, status ("ok" | "failed"),
operator (AND/OR/NOT, null when failed), questions (list<string>: for NOT, the asked question
first and the excluded ones after it), attempts, reason (why the last attempt was invalid),
prompt_hash, model.
"""

from __future__ import annotations

import json
import logging
import re

import pandas as pd
import pyarrow as pa

from boolbench.constants import TYPES
from boolbench.generation.prompts import Prompt
from boolbench.llm import ChatRequest, LLMClient
from boolbench.llm.until_valid import ask_until_valid

log = logging.getLogger(__name__)

MAX_SUBQUESTIONS = 4
DECOMPOSED_SCHEMA = pa.schema(
    [
        ("qid", pa.string()), ("type", pa.string()), ("status", pa.string()),
        ("operator", pa.string()), ("questions", pa.list_(pa.string())),
        ("attempts", pa.int64()), ("reason", pa.string()), ("prompt_hash", pa.string()),
        ("model", pa.string()),
    ]
)  # fmt: skip
# The reply's JSON schema, sent as response_format so that servers that support it (llama.cpp,
# vLLM, OpenAI) constrain decoding to it; replies are checked against it either way.
EXPRESSION_SCHEMA = {
    "type": "object",
    "properties": {
        "operator": {"enum": list(TYPES)},
        "questions": {
            "type": "array",
            "items": {"type": "string", "minLength": 3},
            "minItems": 2,
            "maxItems": MAX_SUBQUESTIONS,
        },
    },
    "required": ["operator", "questions"],
    "additionalProperties": False,
}
RESPONSE_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "boolean_expression", "schema": EXPRESSION_SCHEMA},
}


def parse_expression(text: str | None) -> tuple[str, list[str]]:
    """(operator, simple questions) from a reply; ValueError with a short reason otherwise."""
    if not text:
        raise ValueError("empty")
    match = re.search(r"\{.*\}", text, flags=re.DOTALL)  # tolerate code fences around it
    try:
        data = json.loads(match.group(0) if match else text)
    except json.JSONDecodeError:
        raise ValueError("not_json") from None
    if not isinstance(data, dict):
        raise ValueError("not_an_object")
    operator = str(data.get("operator", "")).strip().upper()
    if operator not in TYPES:
        raise ValueError("bad_operator")
    questions = data.get("questions")
    if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
        raise ValueError("bad_questions")
    questions = [q.strip() for q in questions if q.strip()]
    if not 2 <= len(questions) <= MAX_SUBQUESTIONS:
        raise ValueError("wrong_count")
    if len(set(q.lower() for q in questions)) < len(questions):
        raise ValueError("repeated_question")
    return operator, questions


def decompose(
    llm: LLMClient,
    prompt: Prompt,
    questions: pd.DataFrame,
    retries: int,
    seed: int,
    max_tokens: int,
    json_schema: bool = True,
) -> pd.DataFrame:
    """Decompose every question (qid, type, question); retry invalid replies with seed+1, ...;
    a question still invalid after the last attempt is recorded as failed."""
    by_qid = {row.qid: row for row in questions[["qid", "type", "question"]].itertuples(False)}

    def check(qid, result):
        try:
            return parse_expression(result.content), None
        except ValueError as err:
            return None, str(err)

    answers = ask_until_valid(
        llm,
        list(by_qid),
        lambda qid, attempt: ChatRequest(
            qid,
            prompt.messages(question=by_qid[qid].question),
            seed=seed + attempt,
            max_tokens=max_tokens,
            response_format=RESPONSE_FORMAT if json_schema else None,
        ),
        check,
        retries,
    )
    rows = {}
    for qid, answer in answers.items():
        operator, parts = answer.value or (None, [])
        status = "ok" if answer.reason is None else "failed"
        rows[qid] = _row(by_qid[qid], status, operator, parts, answer.attempts, answer.reason)
    frame = pd.DataFrame([rows[q] for q in questions["qid"]], columns=DECOMPOSED_SCHEMA.names)
    frame["prompt_hash"] = prompt.hash
    frame["model"] = llm.model_name
    failed = (frame["status"] == "failed").sum()
    log.info(
        "decomposed %d questions, %d failed after %d attempts", len(frame), failed, retries + 1
    )
    return frame


def _row(row, status, operator, parts, attempts, reason) -> dict:
    return {
        "qid": row.qid,
        "type": row.type,
        "status": status,
        "operator": operator,
        "questions": parts,
        "attempts": attempts,
        "reason": reason,
    }
