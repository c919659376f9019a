"""The embedded llama.cpp built for this CPU (python -m boolbench.llm.native) against the
prebuilt xllamacpp wheel, printed as ratios from one run.

Each interpreter (a virtual environment with one build or the other installed) serves the same
GGUF on the same threads and reads the same prompts (the default corpus's passages in the
judge's yes/no form, about 100-300 tokens each, no prompt cache) and writes 64 tokens; llama.cpp's
own timings give prompt and generation tokens/s. Ratio = built for this CPU / prebuilt.

    python bench/native_llm.py --prebuilt /path/a/.venv/bin/python --native .venv/bin/python
                               [--models qwen-1.5b qwen-0.5b] [--cache-dir cache]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

# Runs inside each interpreter: serve the model, time the prompts, print one JSON line.
PROBE = r"""
import json, sys, urllib.request
from pathlib import Path
from boolbench.llm.models import resolve_local_model
from boolbench.llm.server import local_server

gguf, _ = resolve_local_model(sys.argv[1], sys.argv[2])
texts = json.loads(sys.argv[3])

def ask(url, content, max_tokens):
    body = {"messages": [{"role": "user", "content": content}], "max_tokens": max_tokens,
            "temperature": 0, "cache_prompt": False}
    request = urllib.request.Request(url + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(request))["timings"]

with local_server(Path(gguf), threads=2, n_parallel=1) as url:
    ask(url, "Warm up.", 1)
    prompt = [ask(url, f"Paragraph: {t}\n\nQuestion: Is this about a city?", 1) for t in texts]
    write = [ask(url, f"Write a question about: {t}", 64) for t in texts[:3]]
print(json.dumps({
    "prompt_tps": sum(t["prompt_n"] for t in prompt) / sum(t["prompt_ms"] for t in prompt) * 1e3,
    "gen_tps": sum(t["predicted_n"] for t in write) / sum(t["predicted_ms"] for t in write) * 1e3,
}))
"""


def passages(n: int) -> list[str]:
    from boolbench.corpus.sources import _load_vital_articles, vital_articles_path

    extracts = [str(a["extract"]) for a in _load_vital_articles(vital_articles_path())[:200]]
    return [t for t in extracts if 60 <= len(t.split()) <= 200][:n]


def probe(python: str, model: str, cache_dir: str, texts: list[str]) -> dict:
    done = subprocess.run(
        [python, "-c", PROBE, model, cache_dir, json.dumps(texts)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"{python}: the probe failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--prebuilt", required=True, help="python of a venv with the wheel")
    parser.add_argument("--native", required=True, help="python of a venv with the build")
    parser.add_argument("--models", nargs="+", default=["qwen-1.5b", "qwen-0.5b"])
    parser.add_argument("--cache-dir", default="cache")
    parser.add_argument("--passages", type=int, default=8)
    args = parser.parse_args()
    texts = passages(args.passages)
    for model in args.models:
        base = probe(args.prebuilt, model, args.cache_dir, texts)
        fast = probe(args.native, model, args.cache_dir, texts)
        for key, what in (("prompt_tps", "prompt reading"), ("gen_tps", "generation")):
            print(
                f"{model} {what}: prebuilt {base[key]:.1f} tok/s, built for this CPU "
                f"{fast[key]:.1f} tok/s, ratio {fast[key] / base[key]:.2f}"
            )


if __name__ == "__main__":
    main()
