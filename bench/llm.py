"""LLM layer throughput, printed as ratios from one run.

1. Calls/s against the fake OpenAI-compatible server (a separate process, 50 ms per answer) at
   concurrency 1, 8 and 32, as a fraction of the ideal concurrency / latency (goal >= 0.8 at 32).
2. Cache-hit throughput: the same batch again, answered from the response cache.
3. Calls/s of the embedded model (llama.cpp on this machine's cores) on short question-writing
   prompts.
4. Our stages against llama.cpp's own throughput, per default LLM step: the requests a stage
   makes (simple questions with Qwen2.5-Coder-0.5B, the filter's yes/no judgements with the
   1.5B, on passages of the default corpus) go through our job path (LLMClient, the step's
   slots and settings); then the same requests go one at a time straight to a fresh llama.cpp
   server of the same GGUF on the same threads, without its prompt cache, and llama.cpp's own
   timings (prompt and generation ms) give its tokens/s. Ratio = ours / llama.cpp's (goal >=
   0.8; above 1 where our ordering lets llama.cpp reuse cached prompt prefixes).

    python bench/llm.py [--latency 0.05] [--calls-per-slot 40] [--local-model qwen-0.5b]
                        [--stage-passages 12] [--skip-fake]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import urllib.request

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


def stage_requests(step: str, n_passages: int) -> tuple[list[ChatRequest], LLMSettings]:
    """The requests of one default LLM step on the first passages of the default corpus, and
    the step's LLM settings (as the workflow resolves them from the default config)."""
    from boolbench.config import load_config_file, step_llm
    from boolbench.corpus.sources import SourceSpec, read_source
    from boolbench.generation.filtering import TOP_LOGPROBS
    from boolbench.generation.prompts import resolve_prompts, step_prompt

    config = load_config_file("config.yaml")
    llm = step_llm(config, step) | {"cache_dir": tempfile.mkdtemp(prefix="boolbench-llm-")}
    settings = LLMSettings.from_config(llm, seed=config["seed"])
    batch = next(iter(read_source(SourceSpec(source="vital_articles"))))
    passages = list(zip(batch["title"][:n_passages], batch["text"][:n_passages], strict=True))
    prompts = resolve_prompts("small", "local")
    requests = []
    if step == "simple":
        prompt = step_prompt(prompts, "simple")
        for i, (title, text) in enumerate(passages):
            messages = prompt.messages(title=title, paragraph=text)
            requests.append(ChatRequest(str(i), messages, seed=1))
    else:  # filter: every passage judged against the questions of its own and the next title
        prompt = step_prompt(prompts, "judge")
        for i, (_, text) in enumerate(passages):
            for j in (i, (i + 1) % len(passages)):
                question = f"What is {passages[j][0]} known for?"
                requests.append(
                    ChatRequest(
                        f"{i}-{j}",
                        prompt.messages(question=question, paragraph=text, paragraphs=text),
                        seed=1,
                        max_tokens=1,
                        temperature=0.0,
                        top_logprobs=TOP_LOGPROBS,
                    )
                )
    return requests, settings


def llamacpp_own_rate(settings: LLMSettings, requests: list[ChatRequest], threads: int) -> float:
    """Tokens/s by llama.cpp's own timings: the requests one at a time, no prompt cache."""
    from boolbench.llm.models import resolve_local_model
    from boolbench.llm.server import local_server

    gguf, _ = resolve_local_model(settings.local_model, settings.cache_dir)
    tokens = seconds = 0.0
    with local_server(gguf, threads=threads, n_parallel=1) as base_url:
        for request in requests:
            body = {
                "model": "local",
                "messages": request.messages,
                "cache_prompt": False,  # every prompt processed in full: the engine's own rate
                "max_tokens": request.max_tokens or settings.max_tokens,
                "temperature": settings.temperature
                if request.temperature is None
                else request.temperature,
                "seed": 1,
            }
            call = urllib.request.Request(
                f"{base_url}/chat/completions",
                json.dumps(body).encode(),
                {"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(call, timeout=600) as response:
                timings = json.load(response)["timings"]
            tokens += timings["prompt_n"] + timings["predicted_n"]
            seconds += (timings["prompt_ms"] + timings["predicted_ms"]) / 1000
    return tokens / seconds


def stage_vs_llamacpp(step: str, n_passages: int, threads: int) -> None:
    requests, settings = stage_requests(step, n_passages)
    with llm_session(settings, threads=threads) as client:
        start = time.perf_counter()
        results = client.run(requests, progress=False)
        elapsed = time.perf_counter() - start
    assert all(r.ok for r in results)
    ours = sum(r.prompt_tokens + r.completion_tokens for r in results) / elapsed
    theirs = llamacpp_own_rate(settings, requests, threads)
    print(
        f"{step} ({settings.local_model}, {settings.concurrency} slots, {len(requests)} calls): "
        f"our job path {ours:.1f} tokens/s, llama.cpp's own {theirs:.1f} tokens/s, "
        f"ratio {ours / theirs:.2f} (goal >= 0.8)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--calls-per-slot", type=int, default=40)
    parser.add_argument("--local-model", default="qwen-0.5b")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stage-passages", type=int, default=12)
    parser.add_argument("--skip-fake", action="store_true", help="only the embedded models")
    args = parser.parse_args()
    if not args.skip_fake:
        fake_server_rates(args.latency, args.calls_per_slot)
    local_model_rate(args.local_model, args.threads)
    for step in ("simple", "filter"):
        stage_vs_llamacpp(step, args.stage_passages, args.threads)


if __name__ == "__main__":
    main()
