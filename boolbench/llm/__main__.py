"""Try the configured LLM endpoint from the command line.

    python -m boolbench.llm [--configfile config.yaml] [--set key=value ...] "a prompt" ...

Answers each prompt with the `llm:` settings of the config (through the response cache, like
the workflow) and prints the answers and the accounting. --set overrides llm keys, e.g.
--set backend=openai --set model=gpt-4o-mini --set api_key_env=OPENAI_API_KEY.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict

import yaml

from boolbench.config import load_config_file, validate_config
from boolbench.errors import BoolbenchError
from boolbench.llm import ChatRequest, LLMSettings, llm_session


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m boolbench.llm", description=__doc__)
    parser.add_argument("prompts", nargs="+")
    parser.add_argument("--configfile", default="config.yaml")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        config = load_config_file(args.configfile)
        for item in args.set:
            key, _, value = item.partition("=")
            config["llm"][key] = yaml.safe_load(value)
        validate_config(config, source=args.configfile)
        settings = LLMSettings.from_config(config["llm"], seed=config["seed"])
        requests = [
            ChatRequest(str(i), [{"role": "user", "content": p}])
            for i, p in enumerate(args.prompts)
        ]
        with llm_session(settings, threads=args.threads) as client:
            results = client.run(requests)
        for result in results:
            print(result.content if result.ok else f"FAILED: {result.error}")
        print(json.dumps(asdict(client.accounting), indent=2), file=sys.stderr)
        return 0 if all(r.ok for r in results) else 1
    except BoolbenchError as err:
        print(f"boolbench: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
