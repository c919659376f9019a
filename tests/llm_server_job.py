"""Starts the embedded server, prints its URL, then waits or fails (for test_llm_local.py)."""

import sys
import time

from boolbench.llm import LLMSettings, llm_session

cache_dir, mode = sys.argv[1], sys.argv[2]
settings = LLMSettings(local_model="smollm2-135m", cache_dir=cache_dir, max_tokens=8)
with llm_session(settings, threads=1) as client:
    client.ensure_started()
    print(client.base_url, flush=True)
    if mode == "fail":
        raise RuntimeError("the job failed")
    time.sleep(120)
