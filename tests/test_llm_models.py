import hashlib
import importlib

import pytest

from boolbench.errors import ConfigError, InputError
from boolbench.llm.models import (
    EMBEDDED_LLMS,
    EmbeddedModel,
    _parts,
    embedded_model_file,
    resolve_local_model,
)

PARTS = [b"GGUF" + b"a" * 1000, b"b" * 1000, b"c" * 37]


@pytest.fixture
def part_packages(tmp_path, monkeypatch):
    """Installs fake part packages bbfake_part1..3 (like the Qwen part packages)."""
    site = tmp_path / "site"
    for i, data in enumerate(PARTS, 1):
        package = site / f"bbfake_part{i}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{i:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    return site


def fake_model(sha256=None, size=None) -> EmbeddedModel:
    joined = b"".join(PARTS)
    return EmbeddedModel(
        "fake",
        "test model",
        sha256 or hashlib.sha256(joined).hexdigest(),
        size if size is not None else len(joined),
        _parts("bbfake_part", 3),
    )


def test_parts_are_joined_once_and_verified(part_packages, tmp_path):
    model = fake_model()
    path = embedded_model_file(model, tmp_path / "cache")
    assert path == tmp_path / "cache" / "models" / "fake.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    first_mtime = path.stat().st_mtime_ns
    assert embedded_model_file(model, tmp_path / "cache") == path
    assert path.stat().st_mtime_ns == first_mtime  # not joined again


def test_a_wrong_part_is_an_error_not_a_silent_load(part_packages, tmp_path):
    (part_packages / "bbfake_part2" / "data" / "part02.bin").write_bytes(b"x" * 1000)
    with pytest.raises(InputError) as error:
        embedded_model_file(fake_model(), tmp_path / "cache")
    message = str(error.value)
    assert "the fake model files add up to 2041 bytes with sha256" in message
    assert "reinstall bbfake-part1 bbfake-part2 bbfake-part3" in message
    assert not (tmp_path / "cache" / "models" / "fake.gguf").exists()
    assert not list((tmp_path / "cache" / "models").glob(".*tmp*"))


def test_a_tampered_joined_file_is_joined_again(part_packages, tmp_path):
    path = embedded_model_file(fake_model(), tmp_path / "cache")
    path.write_bytes(b"corrupted")
    assert embedded_model_file(fake_model(), tmp_path / "cache").read_bytes() == b"".join(PARTS)


def test_a_missing_part_package_is_named(part_packages, tmp_path):
    model = EmbeddedModel("fake", "", "0" * 64, 1, _parts("bbfake_part", 4))
    with pytest.raises(ConfigError, match="needs the package bbfake-part4, which is not installed"):
        embedded_model_file(model, tmp_path / "cache")


def test_a_gguf_path_and_an_unknown_name(tmp_path):
    gguf = tmp_path / "mine.gguf"
    gguf.write_bytes(b"GGUF data")
    path, model_id = resolve_local_model(str(gguf), tmp_path / "cache")
    assert path == gguf
    assert model_id == "gguf-sha256:" + hashlib.sha256(b"GGUF data").hexdigest()
    with pytest.raises(ConfigError, match="neither an embedded model"):
        resolve_local_model("llama-70b", tmp_path / "cache")


def test_the_default_qwen_parts_join_to_the_pinned_file(tmp_path):
    path, model_id = resolve_local_model("qwen-0.5b", tmp_path)
    assert path.stat().st_size == EMBEDDED_LLMS["qwen-0.5b"].size
    assert model_id == f"gguf-sha256:{EMBEDDED_LLMS['qwen-0.5b'].sha256}"
    with open(path, "rb") as handle:
        assert handle.read(4) == b"GGUF"
