"""A job that asks a batch of questions (run as a subprocess by test_llm_resume.py)."""

import sys

from boolbench.llm import ChatRequest, LLMClient, LLMSettings

base_url, cache_dir, count, concurrency = (
    sys.argv[1],
    sys.argv[2],
    int(sys.argv[3]),
    int(sys.argv[4]),
)
settings = LLMSettings(backend="openai", model="fake", cache_dir=cache_dir, concurrency=concurrency)
client = LLMClient(settings, base_url, "fake", "fake")
requests = [
    ChatRequest(str(i), [{"role": "user", "content": f"question {i}"}]) for i in range(count)
]
results = client.run(requests, progress=False)
print(sum(r.ok for r in results), client.accounting.cache_hits, flush=True)
