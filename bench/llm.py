"""LLM layer throughput, printed as ratios from one run.

1. Calls/s against the fake OpenAI-compatible server (a separate process, 50 ms per answer) at
   concurrency 1, 8 and 32, as a fraction of the ideal concurrency / latency (goal >= 0.8 at 32).
2. Cache-hit throughput: the same batch again, answered from the response cache.
3. Calls/s of the embedded model (llama.cpp on this machine's cores) on short question-writing
   prompts.

    python bench/llm.py [--latency 0.05] [--calls-per-slot 40] [--local-model qwen-0.5b]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

from boolbench.llm import ChatRequest, LLMClient, LLMSettings, llm_session
from boolbench.llm.server import free_port

PASSAGES = [
    "The Nile is a major north-flowing river in northeastern Africa.",
    "Jazz is a music genre that originated in the African-American communities of New Orleans.",
    "Erbium is a chemical element with the symbol Er and atomic number 68.",
    "The Taiwan Strait is a 180-kilometer-wide strait separating Taiwan and mainland Asia.",
    "Photosynthesis is a process used by plants to convert light energy into chemical energy.",
    "Mehmed IV was the sultan of the Ottoman Empire from 1648 to 1687.",
    "The Grand Canal is the longest artificial waterway in the world.",
    "Qinghai Lake is the largest lake in China.",
]


def requests(n: int, tag: str) -> list[ChatRequest]:
    return [ChatRequest(str(i), [{"role": "user", "content": f"{tag} {i}"}]) for i in range(n)]


def fake_server_rates(latency: float, calls_per_slot: int) -> None:
    port = free_port()
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "boolbench.llm.fake_server",
            "--port",
            str(port),
            "--latency",
            str(latency),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    server.stdout.readline()  # "serving ..."
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        for concurrency in (1, 8, 32):
            cache = tempfile.mkdtemp(prefix="boolbench-llm-bench-")
            settings = LLMSettings(
                backend="openai",
                model="fake",
                cache_dir=cache,
                concurrency=concurrency,
                timeout_s=30,
            )
            client = LLMClient(settings, base_url, "fake", "fake")
            batch = requests(calls_per_slot * concurrency, f"c{concurrency}")
            start = time.perf_counter()
            results = client.run(batch, progress=False)
            elapsed = time.perf_counter() - start
            assert all(r.ok for r in results)
            rate, ideal = len(batch) / elapsed, concurrency / latency
            print(
                f"fake server, concurrency {concurrency:>2}: {rate:7.1f} calls/s, "
                f"ideal {ideal:6.1f}, fraction of ideal {rate / ideal:.2f}"
            )
        start = time.perf_counter()
        again = LLMClient(settings, base_url, "fake", "fake").run(batch, progress=False)
        elapsed = time.perf_counter() - start
        assert all(r.cached for r in again)
        print(f"cache hits: {len(batch) / elapsed:,.0f} calls/s ({len(batch)} answers)")
    finally:
        server.terminate()
        server.wait()


def local_model_rate(model: str, threads: int) -> None:
    cache = tempfile.mkdtemp(prefix="boolbench-llm-bench-")
    settings = LLMSettings(local_model=model, cache_dir=cache, max_tokens=48, seed=1)
    batch = [
        ChatRequest(
            str(i),
            [
                {"role": "system", "content": "You write one short search question."},
                {"role": "user", "content": f"Write a question answered by this paragraph:\n{p}"},
            ],
        )
        for i, p in enumerate(PASSAGES)
    ]
    with llm_session(settings, threads=threads) as client:
        start = time.perf_counter()
        results = client.run(batch, progress=False)
        elapsed = time.perf_counter() - start
    tokens = sum(r.completion_tokens for r in results)
    print(
        f"embedded {model}, {threads} threads, {settings.concurrency} slots: "
        f"{len(batch) / elapsed:.2f} calls/s ({elapsed / len(batch):.2f} s per call, "
        f"{tokens / elapsed:.1f} completion tokens/s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--calls-per-slot", type=int, default=40)
    parser.add_argument("--local-model", default="qwen-0.5b")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    fake_server_rates(args.latency, args.calls_per_slot)
    local_model_rate(args.local_model, args.threads)


if __name__ == "__main__":
    main()
