"""Glue for workflow scripts: logging to the rule's log, one-line errors for bad input."""

from __future__ import annotations

import logging
import signal
import sys
import traceback
from contextlib import contextmanager

from boolbench.artifacts import check_readable
from boolbench.errors import BoolbenchError
from boolbench.running import STOP_SIGNALS


@contextmanager
def script_context(snakemake):
    """Send stderr and logging to the rule's log; check the job's Parquet and .npy inputs.

    A BoolbenchError (bad input or config, a corrupt input artifact) ends the job with one
    line; any other exception with one line and its traceback below it. Both go to the rule's
    log (on a cluster all a user sees) and to the console; the job exits with status 1.
    SIGTERM or SIGINT (Snakemake stopped: boolbench.running.forward_stop_signals) ends it at
    once, with a line saying so, and status 128 + the signal's number.
    """
    console = sys.stderr
    log_file = open(snakemake.log[0], "w", buffering=1, encoding="utf-8")  # noqa: SIM115
    sys.stderr = log_file
    logging.basicConfig(
        level=logging.INFO,
        stream=log_file,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        force=True,
    )
    stop = _StopSignals()
    try:
        check_readable(snakemake.input)
        yield
    except KeyboardInterrupt:
        name = stop.received or "SIGINT"
        _report(
            f"boolbench: rule {snakemake.rule} interrupted by {name} (Snakemake was stopped); "
            "its outputs are not written, a rerun redoes it",
            log_file,
            console,
        )
        sys.exit(128 + signal.Signals[name].value)
    except BoolbenchError as err:
        _report(f"boolbench: rule {snakemake.rule} failed: {err}", log_file, console)
        sys.exit(1)
    except Exception as err:
        summary = " ".join(str(err).split())[:300]
        _report(
            f"boolbench: rule {snakemake.rule} failed with an unexpected error: "
            f"{type(err).__name__}: {summary} (traceback below)\n"
            + traceback.format_exc().rstrip(),
            log_file,
            console,
        )
        sys.exit(1)
    finally:
        stop.restore()
        sys.stderr = console
        log_file.flush()


class _StopSignals:
    """While a job runs: SIGTERM, like SIGINT, raises KeyboardInterrupt (so every `finally`
    runs: a local LLM server stops, nothing half-written is renamed into place), once; the
    signals that follow (a Ctrl-C reaches the job twice, from the terminal and forwarded by
    Snakemake) are ignored, so that the line saying why is written."""

    def __init__(self):
        self.received: str | None = None
        self._previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
        for signum in STOP_SIGNALS:
            signal.signal(signum, self._stop)

    def _stop(self, signum: int, frame) -> None:
        self.received = signal.Signals(signum).name
        for other in STOP_SIGNALS:
            signal.signal(other, signal.SIG_IGN)
        raise KeyboardInterrupt

    def restore(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)


def _report(message: str, log_file, console) -> None:
    print(message, file=log_file)
    print(message, file=console)


@contextmanager
def llm_job(snakemake):
    """An LLM session for a job; writes the job's accounting when it succeeds."""
    from boolbench.llm import LLMBatchError, LLMSettings, llm_session

    settings = LLMSettings.from_config(snakemake.params.llm, seed=snakemake.params.seed)
    with llm_session(settings, threads=snakemake.threads) as llm:
        try:
            yield llm
        except (KeyboardInterrupt, LLMBatchError):
            logging.getLogger(__name__).warning(
                "the %d answers this job received are in the response cache (%s): a rerun "
                "asks only for the others",
                llm.answers_received,
                settings.cache_dir,
            )
            raise
        llm.accounting.to_json(snakemake.output.accounting)


def model_spec(snakemake, name: str):
    """The job's retriever (params.model). A contrastive model is loaded from the job's input
    folder, not from the results/ path in its params: with a storage provider (profiles/
    kubernetes) the job sees its inputs at local copies elsewhere."""
    from boolbench.retrieval.registry import ModelSpec

    entry = dict(snakemake.params.model)
    trained = snakemake.input.get("trained")
    if trained:
        entry["model"] = str(trained[0])
    return ModelSpec.from_config(name, entry)


def job_shard(snakemake) -> tuple[int, int]:
    """(index, count) of an LLM job's shard of the groups, from its wildcards."""
    return int(snakemake.wildcards.shard), int(snakemake.wildcards.n_shards)
