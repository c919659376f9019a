"""Rebuilding the embedded llama.cpp for the CPU (boolbench.llm.native): which build, when
not, and the refusal to start a build on a CPU it was not made for."""

import json

import pytest

from boolbench.errors import BoolbenchError
from boolbench.llm import native
from boolbench.llm.server import local_server

XEON = "processor\t: 0\nflags\t\t: fpu avx avx2 fma f16c bmi2 avx512f avx512dq avx512cd "
XEON += "avx512bw avx512vl avx512_vnni avx512_bf16 amx_tile amx_int8\nprocessor\t: 1\n"
AVX2_ONLY = "flags\t\t: fpu avx avx2 fma f16c bmi2\n"


def test_an_avx512_cpu_gets_its_extensions_and_never_amx():
    options = native.cmake_options(native.cpu_flags(XEON))
    assert "-DGGML_AVX512=ON" in options and "-DGGML_AVX512_VNNI=ON" in options
    assert "-DGGML_AVX512_BF16=ON" in options and "-DGGML_AVX2=ON" in options
    assert "-DGGML_AVX512_VBMI=ON" not in options  # not in this CPU's flags
    # AMX kernels crash where the kernel does not grant AMX state; -march=native would add them.
    assert {"-DGGML_NATIVE=OFF", "-DGGML_AMX_TILE=OFF", "-DGGML_AMX_INT8=OFF"} <= set(options)
    assert not any(o.startswith("-DGGML_AMX") and o.endswith("=ON") for o in options)


def test_a_cpu_without_avx512_keeps_the_prebuilt_wheel(monkeypatch, tmp_path):
    assert native.cmake_options(native.cpu_flags(AVX2_ONLY)) is None
    monkeypatch.setattr(native, "read_cpuinfo", lambda: AVX2_ONLY)
    said = native.ensure_native(tmp_path)
    assert said.startswith("kept the prebuilt xllamacpp") and "AVX-512" in said
    assert not (tmp_path / "native").exists()


def test_wheels_are_kept_per_version_and_build(tmp_path):
    xeon = native.cmake_options(native.cpu_flags(XEON))
    other = native.cmake_options(native.cpu_flags(XEON.replace(" avx512_bf16", "")))
    assert native.wheel_dir(tmp_path, "1.0", xeon) == native.wheel_dir(tmp_path, "1.0", xeon)
    assert native.wheel_dir(tmp_path, "1.0", xeon) != native.wheel_dir(tmp_path, "1.0", other)
    assert native.wheel_dir(tmp_path, "1.0", xeon) != native.wheel_dir(tmp_path, "1.1", xeon)


def test_no_compiler_or_a_failed_build_keeps_the_prebuilt_wheel(monkeypatch, tmp_path):
    monkeypatch.setattr(native, "read_cpuinfo", lambda: XEON)
    monkeypatch.setattr(native.shutil, "which", lambda tool: None)
    said = native.ensure_native(tmp_path)
    assert said == "kept the prebuilt xllamacpp: no cmake, c++, cc to build it with"
    # A build that fails (here: pip finds no such release) installs nothing and says so.
    monkeypatch.undo()
    monkeypatch.setattr(native, "read_cpuinfo", lambda: XEON)
    monkeypatch.setattr(native.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(native.metadata, "version", lambda name: "0.0.0.404")
    installed = native.marker().parent
    before = sorted(p.name for p in installed.iterdir())
    said = native.ensure_native(tmp_path)
    assert said == "kept the prebuilt xllamacpp: the build failed (above)"
    assert sorted(p.name for p in installed.iterdir()) == before
    assert not list((tmp_path / "native").rglob("*.whl"))


def test_a_build_for_another_cpu_is_refused_in_one_line(monkeypatch, tmp_path):
    note = tmp_path / "boolbench-native.json"
    monkeypatch.setattr(native, "marker", lambda: note)
    assert native.missing_flags() == []  # the prebuilt wheel: no note
    note.write_text(json.dumps({"cpu_flags": ["avx2", "no_such_flag"]}))
    assert native.missing_flags() == ["no_such_flag"]
    # The server refuses before llama.cpp loads anything (it would die of SIGILL).
    with pytest.raises(BoolbenchError) as err, local_server(tmp_path / "absent.gguf"):
        pass
    message = str(err.value)
    assert str(note) in message and "no_such_flag" in message and "\n" not in message
    assert "--only-binary xllamacpp" in message


def test_a_second_setup_on_the_same_cpu_rebuilds_nothing(monkeypatch, tmp_path):
    note = tmp_path / "boolbench-native.json"
    monkeypatch.setattr(native, "marker", lambda: note)
    monkeypatch.setattr(native, "read_cpuinfo", lambda: XEON)
    options = native.cmake_options(native.cpu_flags(XEON))
    note.write_text(json.dumps({"cpu_flags": ["avx512f"], "cmake": options}))
    assert native.ensure_native(tmp_path).endswith("is already built for this CPU")
    assert not (tmp_path / "native").exists()
    # Another CPU's build (other options) is not taken for this one's.
    note.write_text(json.dumps({"cpu_flags": ["avx512f"], "cmake": options[1:]}))
    assert native.ensure_native(tmp_path, check=True).startswith("would build into")


def test_the_probe_answers_with_a_working_build_and_fails_with_a_broken_model(tmp_path):
    # The installed build (the prebuilt wheel here) answers one call of a real GGUF ...
    assert native.works(tmp_path, model="smollm2-135m")
    # ... and a model llama.cpp cannot run fails the probe (the setup then puts the prebuilt
    # wheel back instead of leaving a build the jobs would crash on).
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\0" * 64)
    assert not native.works(tmp_path, model=str(broken))
