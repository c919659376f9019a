"""Batched chat completions through the official `openai` client: cache first, bounded
concurrency, retries with backoff, per-job accounting, and keys kept out of every message."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import socket
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path

from tqdm import tqdm

from boolbench.errors import BoolbenchError
from boolbench.llm.cache import CachedResponse, ResponseCache, cache_key
from boolbench.llm.settings import LLMSettings

log = logging.getLogger(__name__)
for _noisy in ("httpx", "httpx2", "openai"):
    logging.getLogger(_noisy).setLevel(logging.WARNING)


# Transient failures worth another attempt: rate limits, server errors, timeouts, dropped
# connections (APITimeoutError is an APIConnectionError) and unparseable responses.
class EmptyResponseError(Exception):
    """A 200 response that is not a chat completion (e.g. no choices)."""


class ServerStalledError(Exception):
    """The local server made no progress on any call for timeout_s."""


@cache
def retryable_errors() -> tuple[type[Exception], ...]:
    """Errors worth asking again. `openai` is imported where a call is made: importing it
    takes about a second, which every job that merely imports this package would pay."""
    import openai

    return (
        openai.RateLimitError,
        openai.InternalServerError,
        openai.APIConnectionError,
        openai.APIResponseValidationError,
        json.JSONDecodeError,
        EmptyResponseError,
        ServerStalledError,
    )


# How often the progress of a local server is read while calls are in flight.
PROGRESS_POLL_S = 2.0
# A batch stops when no call has succeeded for llm.timeout_s and at least this many attempts
# failed in a row: one timed-out attempt alone (a slow answer) is retried.
DOWN_AFTER_FAILED_ATTEMPTS = 2

# A progress probe: a number that grows while the server works (e.g. llama.cpp's decode count),
# or None when it cannot be read.
ProgressProbe = Callable[[], Awaitable[float | None]]


class LLMBatchError(BoolbenchError):
    """Too many calls of a batch failed after their retries."""


class EndpointUnreachableError(LLMBatchError):
    """Calls cannot connect to the endpoint at all (refused, unknown host): the batch stops."""


class EndpointDownError(LLMBatchError):
    """No call has succeeded for timeout_s while attempts kept failing: the batch stops."""


@dataclass
class _BatchHealth:
    """What the stop rules of a batch see (LLMClient._attempt_failed, _call_failed)."""

    total: int  # requests of the batch, cached and repeated ones included
    weights: Counter  # key -> requests of the batch that share it
    last_success: float  # monotonic time of the last answer (before any: the batch's start)
    failed_in_a_row: int = 0  # attempts failed since then
    recent: Counter = field(default_factory=Counter)  # their errors
    failed: int = 0  # requests whose call failed for good
    errors: Counter = field(default_factory=Counter)  # their errors


@dataclass(frozen=True)
class ChatRequest:
    id: str
    messages: list[dict]
    seed: int | None = None  # None: the settings' seed
    response_format: dict | None = None
    max_tokens: int | None = None  # None: the settings' max_tokens
    temperature: float | None = None  # None: the settings' temperature
    top_logprobs: int | None = None  # ask for this many alternatives of the first token


@dataclass
class ChatResult:
    id: str
    content: str | None = None
    finish_reason: str | None = None
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 0
    error: str | None = None
    top_logprobs: dict[str, float] | None = None  # first token's alternatives, if asked for

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Accounting:
    """What a job's LLM calls cost; written beside its outputs."""

    requests: int = 0  # answers asked for
    cache_hits: int = 0  # answered from the cache (free)
    api_calls: int = 0  # HTTP calls made, retries included
    retries: int = 0
    failures: int = 0  # requests still failing after the retry cap
    prompt_tokens: int = 0  # of new calls (what was paid for now)
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0  # of answers served from the cache (paid for earlier)
    cached_completion_tokens: int = 0
    estimated_cost: float = 0.0  # of new calls, from the configured prices
    wall_s: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)  # error kind -> count

    def to_json(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(asdict(self), indent=2, sort_keys=True) + "\n")


class LLMClient:
    """Runs batches of chat requests against one OpenAI-compatible endpoint."""

    def __init__(
        self,
        settings: LLMSettings,
        base_url: str | None,
        model_id: str,
        endpoint_model: str,
        api_key: str | None = None,
        model_name: str | None = None,
        progress: ProgressProbe | None = None,
        progress_poll_s: float = PROGRESS_POLL_S,
        start: Callable[[], tuple[str, ProgressProbe | None]] | None = None,
    ):
        """`progress`: for a local server (one that only this job uses), a probe of its work;
        then a call times out only after timeout_s without progress, however long it takes.
        `start`: starts that server when the first call is not in the cache and gives its
        (base_url, progress); a job answered from the cache starts none."""
        self.settings = settings
        self.model_name = model_name or model_id  # for people: recorded with every question
        self.base_url = base_url
        self.model_id = model_id  # identifies the weights in cache keys
        self.endpoint_model = endpoint_model  # the `model` field sent to the endpoint
        self._api_key = api_key
        self._progress = progress
        self._poll_s = progress_poll_s
        self._last_progress = time.monotonic()
        self._last_response = 0.0  # monotonic time of the last HTTP response of any call
        self._stop: LLMBatchError | None = None  # why the current batch stopped early
        self._health = _BatchHealth(0, Counter(), time.monotonic())
        self._start = start
        self.cache = ResponseCache(settings.cache_dir)
        self.accounting = Accounting()
        self.answers_received = 0  # new answers, all cached (what a failed job keeps)

    # -- public -------------------------------------------------------------------------------

    def ensure_started(self) -> None:
        """Start the local server now (otherwise at the first call the cache cannot answer)."""
        if self._start is not None:
            self.base_url, self._progress = self._start()
            self._start = None

    def run(self, requests: list[ChatRequest], progress: bool = True) -> list[ChatResult]:
        """Answer every request (from the cache where possible); results in request order."""
        start = time.perf_counter()
        try:
            return asyncio.run(self._run(requests, progress))
        finally:
            self.accounting.wall_s += time.perf_counter() - start

    def check_failures(self, results: list[ChatResult]) -> None:
        """Raise LLMBatchError if more than max_failed_fraction of the results failed."""
        failed = [r for r in results if not r.ok]
        if not results or not failed:
            return
        if len(failed) > self.settings.max_failed_fraction * len(results):
            errors = Counter(r.error for r in failed)
            raise LLMBatchError(self._failures_line(len(failed), len(results), errors))
        log.warning(
            "%d of %d LLM calls failed (within the allowed fraction)", len(failed), len(results)
        )

    def _failures_line(self, failed: int, total: int, errors: Counter) -> str:
        common = errors.most_common(3)
        return (
            f"{failed} of {total} LLM calls failed ({failed / total:.0%}, above "
            f"llm.max_failed_fraction={self.settings.max_failed_fraction:g}); "
            + "; ".join(f"{n} x {error}" for error, n in common)
        )

    def key_for(self, request: ChatRequest) -> str:
        return cache_key(self.model_id, request.messages, self._params(request))

    # -- internals ----------------------------------------------------------------------------

    def _params(self, request: ChatRequest) -> dict:
        params = self.settings.sampling()
        params["seed"] = request.seed if request.seed is not None else self.settings.seed
        if request.max_tokens is not None:
            params["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        if request.response_format is not None:
            params["response_format"] = request.response_format
        if request.top_logprobs is not None:
            params["logprobs"] = True
            params["top_logprobs"] = request.top_logprobs
        return params

    def _redact(self, text: str) -> str:
        if self._api_key and len(self._api_key) >= 4:
            text = text.replace(self._api_key, "[redacted]")
        return text

    async def _run(self, requests: list[ChatRequest], progress: bool) -> list[ChatResult]:
        self.accounting.requests += len(requests)
        keys = [self.key_for(r) for r in requests]
        answers: dict[str, ChatResult] = {}
        todo: dict[str, ChatRequest] = {}  # identical requests are asked once
        for key, request in zip(keys, requests, strict=True):
            if key in answers or key in todo:
                continue
            hit = self.cache.get(key)
            if hit is not None:
                answers[key] = _result_from(request.id, hit, cached=True)
            else:
                todo[key] = request
        cached = [answers[k] for k in keys if k in answers]
        self.accounting.cache_hits += len(cached)
        self.accounting.cached_prompt_tokens += sum(r.prompt_tokens for r in cached)
        self.accounting.cached_completion_tokens += sum(r.completion_tokens for r in cached)
        if todo:
            self.ensure_started()
            log.info(
                "%d requests: %d from the cache, %d to ask %s",
                len(requests),
                len(cached),
                len(todo),
                self.base_url or "OpenAI",
            )
            repeats = Counter(key for key in keys if key in todo)
            self._health = _BatchHealth(len(requests), repeats, time.monotonic())
            answers.update(await self._ask_all(todo, progress))
        results = []
        for key, request in zip(keys, requests, strict=True):
            answer = answers[key]
            results.append(ChatResult(**{**asdict(answer), "id": request.id}))
        return results

    async def _ask_all(self, todo: dict[str, ChatRequest], progress: bool) -> dict[str, ChatResult]:
        import openai

        self._stop = None
        client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=self._api_key or "no-key",  # local servers need none, the client wants one
            # A local server's calls end when it stops making progress (_post), not at a
            # fixed time: on a busy machine a call may take long while the server works.
            timeout=self.settings.timeout_s if self._progress is None else 24 * 3600.0,
            max_retries=0,  # retries are ours: counted, with jitter, honouring Retry-After
            # The SDK's aiohttp transport costs a third less CPU per call than httpx.
            http_client=openai.DefaultAioHttpClient(),
        )
        slots = asyncio.Semaphore(self.settings.concurrency)
        bar = tqdm(
            total=len(todo),
            desc="LLM calls",
            file=sys.stderr,
            disable=not progress,
            mininterval=2.0,
        )

        async def one(key: str, request: ChatRequest) -> tuple[str, ChatResult]:
            async with slots:
                if self._stop:  # stopped while this call waited for its slot
                    raise self._stop
                result = await self._ask(client, key, request)
            bar.update(1)
            return key, result

        tasks = [asyncio.ensure_future(one(k, r)) for k, r in todo.items()]
        watchdog = asyncio.ensure_future(self._watch_progress()) if self._progress else None
        try:
            done = await asyncio.gather(*tasks)
        except BaseException:
            # A stop rule (or an interruption) ends the batch: the other calls are cancelled
            # (every answer received so far is already in the cache).
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        finally:
            if watchdog:
                watchdog.cancel()
            bar.close()
            await client.close()
        return dict(done)

    async def _watch_progress(self) -> None:
        """Record when the local server last advanced (its probe's value changed)."""
        last = None
        self._last_progress = time.monotonic()
        while True:
            try:
                value = await self._progress()
            except Exception as err:  # a failed probe is no progress
                log.debug("progress probe failed: %s", err)
                value = None
            if value is not None and value != last:
                last = value
                self._last_progress = time.monotonic()
            await asyncio.sleep(self._poll_s)

    async def _post(self, client, body: dict) -> object:
        """POST a chat completion; for a local server, wait as long as it makes progress."""
        call = client.post("/chat/completions", body=body, cast_to=object)
        if self._progress is None:
            return await call
        task = asyncio.ensure_future(call)
        started = time.monotonic()
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=self._poll_s)
                if done:
                    return task.result()
                idle = time.monotonic() - max(self._last_progress, started)
                # Progress is read every poll_s: a shorter timeout would see none in between.
                if idle > max(self.settings.timeout_s, 2 * self._poll_s):
                    raise ServerStalledError(
                        f"the local server made no progress for {idle:.1f} s "
                        f"(llm.timeout_s={self.settings.timeout_s:g})"
                    )
        finally:
            if not task.done():
                task.cancel()

    async def _ask(self, client, key: str, request: ChatRequest) -> ChatResult:
        import openai

        params = self._params(request)
        error = "no attempt"
        unreachable_since = None  # start of this call's run of failed connections
        unreachable = 0
        for attempt in range(1, self.settings.max_retries + 2):
            self.accounting.api_calls += 1
            try:
                # The SDK's low-level post (same auth, base URL, error mapping as
                # chat.completions.create) with a plain-dict result: skipping the typed request
                # transform and response model halves the client's CPU per call, which bounds
                # throughput against fast servers.
                response = await self._post(
                    client,
                    {"model": self.endpoint_model, "messages": request.messages, **params},
                )
                self._last_response = time.monotonic()
                answer = _answer_from(response)
            except retryable_errors() as err:
                if isinstance(err, openai.APIStatusError):
                    self._last_response = time.monotonic()
                error = self._describe(err)
                problem = connection_problem(err)
                if problem is None:
                    unreachable_since, unreachable = None, 0
                else:
                    unreachable_since = unreachable_since or time.monotonic()
                    unreachable += 1
                    self._stop_if_unreachable(problem[1], unreachable, unreachable_since)
                self._attempt_failed(error)
                if attempt > self.settings.max_retries:
                    break
                self.accounting.retries += 1
                await asyncio.sleep(self._delay(err, attempt))
                continue
            except openai.APIStatusError as err:  # 4xx other than 429: asking again won't help
                self._last_response = time.monotonic()
                error = self._describe(err)
                self._attempt_failed(error)
                break
            health = self._health
            health.last_success, health.failed_in_a_row = time.monotonic(), 0
            health.recent.clear()
            # Stored at once: a job killed later keeps every answer it has received.
            self.cache.put(
                key, {"model": self.model_id, "messages": request.messages, **params}, answer
            )
            self.answers_received += 1
            self.accounting.prompt_tokens += answer.prompt_tokens
            self.accounting.completion_tokens += answer.completion_tokens
            self.accounting.estimated_cost += (
                answer.prompt_tokens * self.settings.price_per_1k_prompt_tokens
                + answer.completion_tokens * self.settings.price_per_1k_completion_tokens
            ) / 1000
            return _result_from(request.id, answer, cached=False, attempts=attempt)
        self.accounting.failures += 1
        kind = error.split(":", 1)[0]
        self.accounting.errors[kind] = self.accounting.errors.get(kind, 0) + 1
        result = ChatResult(
            id=request.id,
            attempts=attempt,
            error=f"{error} (after {attempt} attempt{'s' if attempt > 1 else ''})",
        )
        self._call_failed(key, result.error)
        return result

    def _attempt_failed(self, error: str) -> None:
        """Count a failed attempt; raise EndpointDownError once no call has succeeded for
        timeout_s (for the embedded server: nor has it made progress) and the last attempts
        failed: the endpoint answers nothing (a hung proxy, 500 on every call), and retrying
        every call would take hours."""
        health = self._health
        health.failed_in_a_row += 1
        health.recent[error.split(":", 1)[0]] += 1
        alive = health.last_success
        if self._progress is not None:
            alive = max(alive, self._last_progress)
        idle = time.monotonic() - alive
        if idle < self.settings.timeout_s or health.failed_in_a_row < DOWN_AFTER_FAILED_ATTEMPTS:
            return
        where = self.base_url or "https://api.openai.com/v1"
        if self._progress is None:
            server = f"no call to the LLM endpoint at {where} succeeded"
        else:
            server = f"the embedded llama.cpp server at {where} made no progress"
        kinds = ", ".join(f"{n} x {kind}" for kind, n in health.recent.most_common(2))
        self._stop = EndpointDownError(
            f"{server} for {idle:.0f} s (llm.timeout_s={self.settings.timeout_s:g}): the last "
            f"{health.failed_in_a_row} attempts failed ({kinds}); stopped (answers received so "
            "far are cached); check the server, or raise llm.timeout_s if it is only slow"
        )
        raise self._stop

    def _call_failed(self, key: str, error: str) -> None:
        """Count a call that failed for good; raise LLMBatchError once more than
        max_failed_fraction of the batch has failed: check_failures would fail it anyway."""
        health = self._health
        health.failed += health.weights[key]
        health.errors[error] += health.weights[key]
        if health.failed <= self.settings.max_failed_fraction * health.total:
            return
        self._stop = LLMBatchError(
            self._failures_line(health.failed, health.total, health.errors)
            + " (stopped early: the calls left cannot bring it under; answers received so far "
            "are cached)"
        )
        raise self._stop

    def _stop_if_unreachable(self, problem: str, failures: int, since: float) -> None:
        """Raise EndpointUnreachableError once a call failed to connect connect_attempts times
        in a row while no call got any response: every other call would fail the same way."""
        if failures < self.settings.connect_attempts or self._last_response > since:
            return
        where = self.base_url or "https://api.openai.com/v1"
        server = "the embedded llama.cpp server" if self._progress else "the LLM endpoint"
        self._stop = EndpointUnreachableError(
            f"cannot reach {server} at {where}: {problem} ({failures} attempts in a row over "
            f"{time.monotonic() - since:.0f} s, no call got through); check that the server is "
            "running and llm.base_url (answers received so far are cached)"
        )
        raise self._stop

    def _describe(self, err: Exception) -> str:
        problem = connection_problem(err)
        if problem is not None:
            kind, what = problem
            return self._redact(f"{kind}: {what} ({self.base_url or 'OpenAI'})")
        status = getattr(err, "status_code", None)
        message = " ".join(str(err).split())[:200]
        kind = type(err).__name__ + (f" {status}" if status else "")
        return self._redact(f"{kind}: {message}")

    def _delay(self, err: Exception, attempt: int) -> float:
        retry_after = _retry_after(err)
        if retry_after is not None:
            return min(retry_after, self.settings.backoff_max_s)
        ceiling = min(self.settings.backoff_max_s, self.settings.backoff_s * 2 ** (attempt - 1))
        return random.uniform(ceiling / 2, ceiling)  # jitter spreads out synchronised retries


def connection_problem(err: BaseException) -> tuple[str, str] | None:
    """(kind, what) when a call could not connect at all: ("ConnectionRefused", "connection
    refused"), ("UnknownHost", "unknown host h (...)") or ("CannotConnect", ...); None when it
    connected (or timed out waiting for an answer). The SDK's aiohttp transport reports all of
    these as a timeout; the cause is further down the exception chain."""
    seen = set()
    cause: BaseException | None = err
    host = None
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        host = getattr(cause, "host", None) or host  # aiohttp's connector errors know it
        inner = getattr(cause, "os_error", None)  # aiohttp's connector errors wrap the OSError
        for found in (cause, inner):
            if isinstance(found, ConnectionRefusedError):
                return "ConnectionRefused", "connection refused"
            if isinstance(found, socket.gaierror):
                name = f" {host}" if isinstance(host, str) else ""
                return "UnknownHost", f"unknown host{name} ({found.strerror or found})"
        if type(cause).__name__.startswith("ClientConnector") and isinstance(inner, OSError):
            return "CannotConnect", f"cannot connect ({inner.strerror or inner})"
        cause = cause.__cause__ or cause.__context__
    return None


def _retry_after(err: Exception) -> float | None:
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None) or {}
    if value := headers.get("retry-after-ms"):
        try:
            return float(value) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:  # an HTTP date
        return max(0.0, email.utils.parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


def _answer_from(response: object) -> CachedResponse:
    """The first choice of a chat completion (as parsed JSON)."""
    try:
        choice = response["choices"][0]
        content = choice["message"].get("content")
        usage = response.get("usage") or {}
    except (TypeError, KeyError, IndexError, AttributeError):
        raise EmptyResponseError(f"not a chat completion: {str(response)[:100]}") from None
    return CachedResponse(
        content=content,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        completion_tokens=int(usage.get("completion_tokens") or 0),
        top_logprobs=_first_token_alternatives(choice),
    )


def _first_token_alternatives(choice: dict) -> dict[str, float] | None:
    """token -> log probability of the first generated token's top alternatives (OpenAI's
    `logprobs.content[0].top_logprobs`), or None when the response has none."""
    try:
        first = choice["logprobs"]["content"][0]
    except (TypeError, KeyError, IndexError):
        return None
    alternatives: dict[str, float] = {}
    for item in first.get("top_logprobs") or [first]:
        token, logprob = item.get("token"), item.get("logprob")
        if isinstance(token, str) and isinstance(logprob, int | float):
            # The same text can appear as several tokens: keep the likeliest.
            alternatives[token] = max(float(logprob), alternatives.get(token, float("-inf")))
    return alternatives or None


def _result_from(
    request_id: str, answer: CachedResponse, cached: bool, attempts: int = 0
) -> ChatResult:
    return ChatResult(
        id=request_id,
        content=answer.content,
        finish_reason=answer.finish_reason,
        cached=cached,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
        attempts=attempts,
        top_logprobs=answer.top_logprobs,
    )
