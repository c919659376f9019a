"""A fake OpenAI-compatible chat server over real HTTP on 127.0.0.1, with fault injection.

For tests, benchmarks and offline dry runs of the workflow. It answers POST
/v1/chat/completions deterministically ("Q: <last user message> | seed <seed>" unless a
responder is given), counts requests per prompt, and tracks the largest number in flight.

Faults: a prompt containing a marker such as `[fault:429,500]` gets those faults on its first
attempts (one per attempt, in order), then succeeds. Faults: 429 (with Retry-After: 1), 500,
503, 400, slow (works `slow_s` before answering), stall (sleeps `slow_s` without progress, then
answers), badjson (a 200 with a truncated body), drop (closes the connection without
answering), echo-auth (a 400 whose body repeats the request's Authorization header, as some
proxies do).

Outages (`server.outage`, or `start_outage` after some more answers): "500" answers every
call with a 500; "hang" accepts every call and never answers (until the outage ends or the
server stops: then it closes the connection), like a wedged proxy.

Like llama.cpp's server, GET /metrics shows a counter (llamacpp:n_decode_total) that grows
every 50 ms while a request is being worked on (its latency, or a slow fault), and not while
one stalls.

Run standalone: python -m boolbench.llm.fake_server --port 8000 --latency 0.05
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULT_MARKER = re.compile(r"\[fault:([a-z0-9,\-]+)\]")


def default_responder(body: dict) -> str:
    last_user = [m for m in body.get("messages", []) if m.get("role") == "user"][-1]
    return f"Q: {last_user['content']} | seed {body.get('seed')}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # many concurrent clients connect at once


class FakeOpenAIServer:
    """Start with `with FakeOpenAIServer() as server:`; `server.base_url` ends in /v1."""

    def __init__(
        self,
        latency_s: float = 0.0,
        slow_s: float = 5.0,
        responder: Callable[[dict], str | tuple[str, dict[str, float]]] = default_responder,
        port: int = 0,
    ):
        self.latency_s = latency_s
        self.slow_s = slow_s
        self.responder = responder
        self.lock = threading.Lock()
        self.requests: Counter[str] = Counter()  # prompt -> requests received
        self.completed: Counter[str] = Counter()  # prompt -> successful answers sent
        self.auth_headers: list[str] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.decoded = 0  # the /metrics progress counter
        self.outage: str | None = None  # None, "500" or "hang" (see the module docstring)
        self._outage_after: tuple[str, int] | None = None  # (outage, answers left before it)
        self._release = threading.Event()  # set: hung calls give up (a new one per outage)
        self._httpd = _Server(("127.0.0.1", port), self._handler_class())
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._release.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def start_outage(self, outage: str, after: int = 0) -> None:
        """Every call gets `outage` ("500" or "hang") once `after` more calls were let through."""
        with self.lock:
            self.outage, self._outage_after = (
                (outage, None) if after <= 0 else (None, (outage, after))
            )

    def end_outage(self) -> None:
        with self.lock:
            self.outage = self._outage_after = None
            self._release.set()
            self._release = threading.Event()

    def _answered(self, prompt: str) -> None:
        with self.lock:
            self.completed[prompt] += 1

    def _admit(self) -> str | None:
        """The outage this call gets (None: answer it). A pending outage counts the calls it
        still lets through here, as each arrives, so that calls in flight together cannot slip
        more than `after` answers past it."""
        with self.lock:
            if self.outage is None and self._outage_after is not None:
                outage, left = self._outage_after
                if left > 0:
                    self._outage_after = (outage, left - 1)
                    return None
                self.outage, self._outage_after = outage, None
            return self.outage

    def total_requests(self) -> int:
        with self.lock:
            return sum(self.requests.values())

    def _handler_class(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out in separate writes; without TCP_NODELAY, Nagle's
                # algorithm and delayed ACKs add ~40 ms to every answer.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/metrics":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server.lock:
                    page = f"llamacpp:n_decode_total {server.decoded}\n"
                self._send_raw(200, page.encode(), {"Content-Type": "text/plain"})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                prompt = json.dumps(body.get("messages"), sort_keys=True)
                with server.lock:
                    server.requests[prompt] += 1
                    attempt = server.requests[prompt]
                    server.auth_headers.append(self.headers.get("Authorization", ""))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    self._answer(body, prompt, attempt)
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _work(self, seconds: float, progress: bool = True) -> None:
                end = time.monotonic() + seconds
                while (left := end - time.monotonic()) > 0:
                    time.sleep(min(0.05, left))
                    if progress:
                        with server.lock:
                            server.decoded += 1

            def _answer(self, body: dict, prompt: str, attempt: int) -> None:
                outage = server._admit()
                if outage == "hang":
                    server._release.wait()
                    self.close_connection = True
                    return
                if outage == "500":
                    self._send(500, {"error": {"message": "injected outage"}})
                    return
                if server.latency_s:
                    self._work(server.latency_s)
                fault = _fault_for(prompt, attempt)
                if fault == "429":
                    self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "1"})
                elif fault in ("500", "503", "400"):
                    self._send(int(fault), {"error": {"message": f"injected {fault}"}})
                elif fault == "echo-auth":
                    echoed = self.headers.get("Authorization", "")
                    self._send(400, {"error": {"message": f"bad request with header {echoed}"}})
                elif fault == "drop":
                    self.close_connection = True
                    self.connection.close()
                elif fault == "badjson":
                    self._send_raw(200, b'{"id": "x", "choices": [')
                else:
                    if fault in ("slow", "stall"):
                        self._work(server.slow_s, progress=fault == "slow")
                    self._send(200, _completion(body, server.responder(body)))
                    server._answered(prompt)

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                self._send_raw(status, json.dumps(payload).encode(), headers)

            def _send_raw(self, status: int, data: bytes, headers: dict | None = None) -> None:
                headers = {"Content-Type": "application/json", **(headers or {})}
                try:
                    self.send_response(status)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (e.g. its timeout); nothing to do

        return Handler


def _fault_for(prompt: str, attempt: int) -> str | None:
    match = FAULT_MARKER.search(prompt)
    if not match:
        return None
    faults = match.group(1).split(",")
    return faults[attempt - 1] if attempt <= len(faults) else None


def _completion(body: dict, answer: str | tuple[str, dict[str, float]]) -> dict:
    """A chat completion of `answer`: the reply, or (reply, first token's alternatives as
    token -> probability), which a request with `logprobs` gets back as OpenAI does."""
    content, alternatives = answer if isinstance(answer, tuple) else (answer, None)
    prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
    completion_tokens = len(content.split())
    choice = {
        "index": 0,
        "message": {"role": "assistant", "content": content},
        "finish_reason": "stop",
    }
    if body.get("logprobs"):
        first = (content.split() or [""])[0]
        alternatives = alternatives or {first: 1.0}
        top = [
            {"token": token, "logprob": math.log(max(p, 1e-12))}
            for token, p in sorted(alternatives.items(), key=lambda kv: -kv[1])
        ][: body.get("top_logprobs") or 1]
        choice["logprobs"] = {"content": [{"token": first, "logprob": top[0]["logprob"],
                                           "top_logprobs": top}]}  # fmt: skip
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fake"),
        "choices": [choice],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible chat server")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per answer")
    args = parser.parse_args()
    with FakeOpenAIServer(latency_s=args.latency, port=args.port) as server:
        print(f"serving {server.base_url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
