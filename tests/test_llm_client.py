"""The LLM client against a fake OpenAI-compatible server over real HTTP."""

import json
import logging
import os
import time

import pytest

from boolbench.errors import ConfigError
from boolbench.llm import (
    ChatRequest,
    EndpointDownError,
    EndpointUnreachableError,
    LLMBatchError,
    LLMClient,
    LLMSettings,
    llm_session,
)
from boolbench.llm.client import _retry_after
from boolbench.llm.fake_server import FakeOpenAIServer
from boolbench.llm.server import free_port, llama_progress, progress_probe

FAKE_KEY = "sk-boolbench-test-SECRET-8d1f3a9c"


@pytest.fixture
def server():
    with FakeOpenAIServer(slow_s=2.0) as fake:
        yield fake


def client_for(server, tmp_path, **overrides) -> LLMClient:
    values = {
        "backend": "openai",
        "model": "fake-model",
        "base_url": server.base_url,
        "cache_dir": str(tmp_path / "cache"),
        "backoff_s": 0.01,
        "timeout_s": 0.5,
        "seed": 11,
    }
    settings = LLMSettings(**{**values, **overrides})
    return LLMClient(settings, server.base_url, "fake-model", "fake-model", api_key=FAKE_KEY)


def ask(*prompts: str) -> list[ChatRequest]:
    return [ChatRequest(f"r{i}", [{"role": "user", "content": p}]) for i, p in enumerate(prompts)]


def test_answers_come_back_in_order_with_usage(server, tmp_path):
    client = client_for(server, tmp_path)
    results = client.run(ask("alpha", "beta", "gamma"), progress=False)
    assert [r.content for r in results] == [f"Q: {p} | seed 11" for p in ("alpha", "beta", "gamma")]
    assert [r.id for r in results] == ["r0", "r1", "r2"]
    assert all(r.ok and not r.cached and r.attempts == 1 for r in results)
    assert client.accounting.prompt_tokens == 3 and client.accounting.completion_tokens == 15
    assert server.auth_headers[0] == f"Bearer {FAKE_KEY}"  # the key is used, just never shown


def test_cache_hit_and_miss(server, tmp_path):
    client_for(server, tmp_path).run(ask("alpha", "beta"), progress=False)
    assert server.total_requests() == 2
    # A new client (a rerun, another job) with one new request: only that one is asked.
    again = client_for(server, tmp_path)
    results = again.run(ask("alpha", "beta", "delta"), progress=False)
    assert server.total_requests() == 3
    assert [r.cached for r in results] == [True, True, False]
    assert results[0].content == "Q: alpha | seed 11"
    assert again.accounting.cache_hits == 2 and again.accounting.api_calls == 1
    assert again.accounting.cached_prompt_tokens == 2


def test_cache_key_covers_sampling_parameters(server, tmp_path):
    client_for(server, tmp_path).run(ask("alpha"), progress=False)
    client_for(server, tmp_path, temperature=0.1).run(ask("alpha"), progress=False)
    reseeded = [ChatRequest("x", [{"role": "user", "content": "alpha"}], seed=99)]
    result = client_for(server, tmp_path).run(reseeded, progress=False)[0]
    assert server.total_requests() == 3
    assert result.content == "Q: alpha | seed 99"


def test_identical_requests_in_a_batch_are_asked_once(server, tmp_path):
    results = client_for(server, tmp_path).run(ask("same", "same", "other"), progress=False)
    assert server.total_requests() == 2
    assert results[0].content == results[1].content and [r.id for r in results][:2] == ["r0", "r1"]


@pytest.mark.parametrize(
    ("fault", "attempts"),
    [("500", 2), ("503,500", 3), ("badjson", 2), ("drop", 2), ("slow", 2)],
)
def test_transient_faults_are_retried(server, tmp_path, fault, attempts):
    client = client_for(server, tmp_path)
    result = client.run(ask(f"hello [fault:{fault}]"), progress=False)[0]
    assert result.ok and result.attempts == attempts
    assert client.accounting.retries == attempts - 1
    assert client.accounting.api_calls == attempts


def test_429_honours_retry_after(server, tmp_path):
    client = client_for(server, tmp_path)
    start = time.perf_counter()
    result = client.run(ask("limited [fault:429]"), progress=False)[0]
    assert result.ok and result.attempts == 2
    assert time.perf_counter() - start >= 1.0  # the fake server says Retry-After: 1


def test_client_errors_are_not_retried(server, tmp_path):
    client = client_for(server, tmp_path, max_failed_fraction=1.0)
    result = client.run(ask("bad [fault:400]"), progress=False)[0]
    assert not result.ok and result.attempts == 1
    assert result.error.startswith("BadRequestError 400:")
    assert server.total_requests() == 1


def test_retry_cap_then_failure_is_recorded(server, tmp_path):
    client = client_for(server, tmp_path, max_retries=2, max_failed_fraction=1.0)
    results = client.run(ask("ok", "doomed [fault:500,500,500,500]"), progress=False)
    assert results[0].ok and not results[1].ok
    assert results[1].attempts == 3 and "(after 3 attempts)" in results[1].error
    assert client.accounting.failures == 1
    assert client.accounting.errors == {"InternalServerError 500": 1}
    # Failures are not cached: the next run asks again (and now succeeds).
    assert client_for(server, tmp_path).run(ask("doomed [fault:500,500,500,500]"), False)[0].ok


def test_failure_threshold(server, tmp_path):
    prompts = [f"p{i}" for i in range(9)] + ["doomed [fault:400,400]"]
    client = client_for(server, tmp_path, max_failed_fraction=0.1)
    results = client.run(ask(*prompts), progress=False)
    client.check_failures(results)  # 1 of 10 is allowed

    strict = client_for(server, tmp_path, max_failed_fraction=0.05)
    with pytest.raises(LLMBatchError) as error:
        strict.check_failures(strict.run(ask(*prompts), progress=False))
    assert str(error.value).startswith(
        "1 of 10 LLM calls failed (10%, above llm.max_failed_fraction=0.05); 1 x BadRequestError"
    )


def test_concurrency_bound_is_respected(tmp_path):
    with FakeOpenAIServer(latency_s=0.1) as server:
        client = client_for(server, tmp_path, concurrency=5, timeout_s=5)
        client.run(ask(*[f"p{i}" for i in range(40)]), progress=False)
        assert server.max_in_flight == 5


def test_api_key_never_appears_in_outputs(server, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    client = client_for(server, tmp_path, max_retries=1, max_failed_fraction=1.0)
    prompts = ("fine", "proxy [fault:echo-auth]", "down [fault:500,500]")
    results = client.run(ask(*prompts), progress=False)
    assert "[redacted]" in results[1].error
    client.accounting.to_json(tmp_path / "accounting.json")
    strict = client_for(server, tmp_path, max_retries=0)
    with pytest.raises(LLMBatchError) as error:
        strict.check_failures(results)
    with pytest.raises(LLMBatchError) as stopped:  # the batch stopped at its first failure
        strict.run(ask("again [fault:echo-auth]"), progress=False)
    texts = [
        str(error.value),
        str(stopped.value),
        caplog.text,
        (tmp_path / "accounting.json").read_text(),
        *(r.error or "" for r in results),
        *(p.read_text() for p in (tmp_path / "cache").rglob("*") if p.is_file()),
    ]
    assert all(FAKE_KEY not in text for text in texts)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1


def test_missing_key_variable_is_named_not_shown(tmp_path, monkeypatch):
    monkeypatch.delenv("BOOLBENCH_TEST_KEY", raising=False)
    settings = LLMSettings(backend="openai", model="m", api_key_env="BOOLBENCH_TEST_KEY")
    with (
        pytest.raises(ConfigError, match="'BOOLBENCH_TEST_KEY', which is not set"),
        llm_session(settings),
    ):
        pass
    monkeypatch.setenv("BOOLBENCH_TEST_KEY", FAKE_KEY)
    with llm_session(settings) as client:
        assert client._api_key == FAKE_KEY


@pytest.mark.parametrize("where", ["a file", "a folder in a file", "a read-only folder"])
def test_a_cache_dir_that_cannot_be_written_is_refused_before_any_call(server, tmp_path, where):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    if where == "a read-only folder":
        if os.geteuid() == 0:
            pytest.skip("root writes into read-only folders")
        cache_dir = tmp_path / "read-only"
        cache_dir.mkdir(mode=0o555)
        problem = "Permission denied"
    else:
        cache_dir = blocker if where == "a file" else blocker / "cache"
        problem = f"{blocker} is a file, not a folder"
    settings = LLMSettings(
        backend="openai", model="m", base_url=server.base_url, cache_dir=str(cache_dir)
    )
    with pytest.raises(ConfigError) as error, llm_session(settings) as client:
        client.run(ask("p"), progress=False)
    assert str(error.value).startswith(
        f"llm.cache_dir: cannot write the LLM response cache in {cache_dir}: {problem}"
    )
    assert str(error.value).endswith("; set llm.cache_dir to a folder this job can write")
    assert server.total_requests() == 0


def test_accounting_file_and_cost(server, tmp_path):
    client = client_for(
        server, tmp_path, price_per_1k_prompt_tokens=2.0, price_per_1k_completion_tokens=4.0
    )
    client.run(ask("alpha beta", "gamma"), progress=False)
    client.run(ask("alpha beta"), progress=False)  # cached: costs nothing more
    client.accounting.to_json(tmp_path / "a.json")
    saved = json.loads((tmp_path / "a.json").read_text())
    # prompts: 2 + 1 words; answers "Q: <prompt> | seed 11": 6 + 5 words.
    assert saved["prompt_tokens"] == 3 and saved["completion_tokens"] == 11
    assert saved["estimated_cost"] == pytest.approx((3 * 2.0 + 11 * 4.0) / 1000)
    assert saved["requests"] == 3 and saved["cache_hits"] == 1 and saved["api_calls"] == 2
    assert saved["wall_s"] > 0


class _Headers(dict):
    def get(self, key, default=None):
        return super().get(key.lower(), default)


class _Err(Exception):
    def __init__(self, headers):
        self.response = type("R", (), {"headers": _Headers(headers)})()


def test_retry_after_forms():
    assert _retry_after(_Err({"retry-after": "3"})) == 3.0
    assert _retry_after(_Err({"retry-after-ms": "250"})) == 0.25
    in_ten = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 10))
    assert 8 <= _retry_after(_Err({"retry-after": in_ten})) <= 10
    assert _retry_after(_Err({"retry-after": "soon"})) is None
    assert _retry_after(Exception()) is None


def test_backoff_grows_with_jitter(server, tmp_path):
    client = client_for(server, tmp_path, backoff_s=1.0, backoff_max_s=5.0)
    delays = [client._delay(Exception(), attempt) for attempt in (1, 2, 3, 4, 5)]
    assert 0.5 <= delays[0] <= 1.0 and 1.0 <= delays[1] <= 2.0 and 2.0 <= delays[2] <= 4.0
    assert all(2.5 <= d <= 5.0 for d in delays[3:])  # capped


# -- endpoints that cannot be reached, and a slow local server --------------------------------


def closed_port_url() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there


def unreachable_client(base_url, tmp_path, **overrides) -> LLMClient:
    values = {"backend": "openai", "model": "m", "base_url": base_url, "seed": 1,
              "cache_dir": str(tmp_path / "cache"), "backoff_s": 0.01,
              "concurrency": 2}  # fmt: skip
    settings = LLMSettings(**{**values, **overrides})
    return LLMClient(settings, base_url, "m", "m")


def test_refused_connection_is_named_and_stops_the_batch(tmp_path):
    url = closed_port_url()
    client = unreachable_client(url, tmp_path, connect_attempts=3, max_retries=5)
    with pytest.raises(EndpointUnreachableError) as error:
        client.run(ask(*[f"p{i}" for i in range(20)]), progress=False)
    assert str(error.value).startswith(
        f"cannot reach the LLM endpoint at {url}: connection refused (3 attempts in a row over "
    )
    assert str(error.value).endswith(
        "no call got through); check that the server is running and llm.base_url "
        "(answers received so far are cached)"
    )
    # At most 3 attempts of each call in flight, not 6 attempts of all 20 calls.
    assert client.accounting.api_calls <= 2 * 3


def test_unknown_host_is_named(tmp_path):
    url = "http://no-such-host.invalid:8000/v1"
    with pytest.raises(EndpointUnreachableError) as error:
        unreachable_client(url, tmp_path, connect_attempts=2).run(ask("p"), progress=False)
    assert str(error.value).startswith(
        f"cannot reach the LLM endpoint at {url}: unknown host no-such-host.invalid ("
    )


def test_connection_failures_are_counted_as_such_not_as_timeouts(tmp_path):
    url = closed_port_url()
    client = unreachable_client(
        url, tmp_path, connect_attempts=10, max_retries=1, max_failed_fraction=1.0
    )
    results = client.run(ask("a", "b"), progress=False)
    assert [r.error for r in results] == [
        f"ConnectionRefused: connection refused ({url}) (after 2 attempts)"
    ] * 2
    assert client.accounting.errors == {"ConnectionRefused": 2}


def test_a_connected_call_resets_nothing_it_should_not(server, tmp_path):
    # Dropped connections (the server accepted, then closed) are not "cannot connect": with
    # connect_attempts=1 they are retried as before.
    client = client_for(server, tmp_path, connect_attempts=1)
    result = client.run(ask("hello [fault:drop,drop]"), progress=False)[0]
    assert result.ok and result.attempts == 3


# -- endpoints that take calls and answer none --------------------------------------------------


def test_a_hung_endpoint_stops_the_batch(server, tmp_path):
    # The server accepts every call and never answers: once the calls in flight have timed out
    # (no call succeeded for timeout_s), the batch stops instead of retrying every call.
    server.start_outage("hang")
    client = client_for(server, tmp_path, max_retries=5, max_failed_fraction=1.0)
    with pytest.raises(EndpointDownError) as error:
        client.run(ask(*[f"p{i}" for i in range(10)]), progress=False)
    assert str(error.value).startswith(
        f"no call to the LLM endpoint at {server.base_url} succeeded for "
    )
    assert str(error.value).endswith(
        "(llm.timeout_s=0.5): the last 2 attempts failed (2 x APITimeoutError); stopped (answers "
        "received so far are cached); check the server, or raise llm.timeout_s if it is only slow"
    )
    # The first attempt of each call in flight (and maybe a retry begun between their ends).
    assert client.accounting.api_calls <= 3


def test_an_endpoint_that_answers_500_to_everything_stops_and_keeps_what_was_paid(server, tmp_path):
    server.start_outage("500", after=3)  # answers 3 calls, then 500 to every call
    prompts = [f"p{i}" for i in range(40)]
    client = client_for(server, tmp_path, backoff_s=0.05, max_failed_fraction=1.0)
    with pytest.raises(EndpointDownError, match=r"x InternalServerError 500\); stopped"):
        client.run(ask(*prompts), progress=False)
    assert client.accounting.api_calls < 40  # not 6 attempts of each of the 40 calls
    # The 3 answers are cached: once the endpoint is back, a rerun asks only the other 37.
    server.end_outage()
    asked = server.total_requests()
    rerun = client_for(server, tmp_path, backoff_s=0.05)
    results = rerun.run(ask(*prompts), progress=False)
    assert all(r.ok for r in results) and rerun.accounting.cache_hits == 3
    assert server.total_requests() - asked == 37


def test_a_batch_stops_once_its_failures_cannot_stay_under_the_allowed_fraction(server, tmp_path):
    # 2 of 20 calls may fail; the third failure (a 400, not retried) makes the batch fail
    # whatever the rest do, so the calls after it are never asked.
    prompts = [f"p{i}" + (" [fault:400]" if i in (5, 10, 15) else "") for i in range(20)]
    client = client_for(server, tmp_path, concurrency=1, max_failed_fraction=0.1)
    with pytest.raises(LLMBatchError) as error:
        client.run(ask(*prompts), progress=False)
    assert str(error.value).startswith(
        "3 of 20 LLM calls failed (15%, above llm.max_failed_fraction=0.1); 3 x BadRequestError"
    )
    assert str(error.value).endswith(
        "(stopped early: the calls left cannot bring it under; answers received so far are cached)"
    )
    assert server.total_requests() == 16


def local_client(server, tmp_path, **overrides) -> LLMClient:
    """A client that watches the server's progress, as for the embedded llama.cpp server."""
    values = {"backend": "local", "cache_dir": str(tmp_path / "cache"), "backoff_s": 0.01,
              "timeout_s": 0.5, "seed": 3, "concurrency": 2}  # fmt: skip
    settings = LLMSettings(**{**values, **overrides})
    probe = progress_probe(server.base_url, timeout_s=5)
    return LLMClient(settings, server.base_url, "m", "local", progress=probe, progress_poll_s=0.1)


def test_a_slow_local_server_that_makes_progress_never_times_out(tmp_path):
    # Each answer takes 1.5 s, three times timeout_s (a busy machine): as long as the server's
    # counters move, no call times out.
    with FakeOpenAIServer(latency_s=1.5) as slow:
        client = local_client(slow, tmp_path)
        results = client.run(ask("a", "b", "c", "d"), progress=False)
        assert all(r.ok and r.attempts == 1 for r in results)
        assert client.accounting.retries == 0 and slow.decoded > 0
        # Control: the same server behind a plain per-call timeout times out every call.
        plain = client_for(slow, tmp_path / "plain", max_retries=0, max_failed_fraction=1.0)
        with pytest.raises(EndpointDownError, match="the last 2 attempts failed"):
            plain.run(ask("a", "b"), progress=False)


def test_a_stalled_call_of_the_local_server_times_out_and_is_retried(tmp_path):
    with FakeOpenAIServer(slow_s=3.0) as server:
        client = local_client(server, tmp_path, max_retries=1, max_failed_fraction=1.0)
        results = client.run(ask("once [fault:stall]"), False)
        assert results[0].ok and results[0].attempts == 2
        assert client.accounting.errors == {} and client.accounting.retries == 1


def test_a_stalled_local_server_stops_the_batch(tmp_path):
    # Both calls stall (no progress for timeout_s): a server that does nothing is not retried.
    with FakeOpenAIServer(slow_s=3.0) as server:
        client = local_client(server, tmp_path, max_retries=5)
        with pytest.raises(EndpointDownError) as error:
            client.run(ask("a [fault:stall,stall]", "b [fault:stall,stall]"), False)
        assert str(error.value).startswith(
            f"the embedded llama.cpp server at {server.base_url} made no progress for "
        )
        assert "(llm.timeout_s=0.5): the last 2 attempts failed (2 x ServerStalledError)" in str(
            error.value
        )
        assert client.accounting.api_calls <= 3  # not 6 attempts of each call


def test_llama_metrics_progress():
    page = (
        "# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.\n"
        "llamacpp:prompt_tokens_total 38\nllamacpp:tokens_predicted_total 0\n"
        "llamacpp:n_decode_total 13\nllamacpp:requests_processing 1\n"
    )
    assert llama_progress(page) == 51
    assert llama_progress("something else 1\n") is None
