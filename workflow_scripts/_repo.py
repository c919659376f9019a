"""Put the repository root on sys.path, so that jobs import boolbench even in environments where
it is not installed (`--sdm conda`, containers, cluster nodes). Snakemake puts this folder on
sys.path of every script it runs."""

import sys
from pathlib import Path

_root = str(Path(__file__).resolve().parents[1])
if _root not in sys.path:
    sys.path.insert(0, _root)
