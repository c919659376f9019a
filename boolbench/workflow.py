"""Glue for workflow scripts: logging to the rule's log, one-line errors for bad input."""

from __future__ import annotations

import logging
import sys
from contextlib import contextmanager

from boolbench.errors import BoolbenchError


@contextmanager
def script_context(snakemake):
    """Send stderr and logging to the rule's log; report a BoolbenchError as one line, exit 1."""
    console = sys.stderr
    log_file = open(snakemake.log[0], "w", buffering=1, encoding="utf-8")  # noqa: SIM115
    sys.stderr = log_file
    logging.basicConfig(
        level=logging.INFO,
        stream=log_file,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    try:
        yield
    except BoolbenchError as err:
        message = f"boolbench: rule {snakemake.rule} failed: {err}"
        print(message, file=log_file)
        print(message, file=console)
        sys.exit(1)
    finally:
        sys.stderr = console
        log_file.flush()
