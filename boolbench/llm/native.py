"""Rebuild the embedded llama.cpp (xllamacpp) for this machine's CPU.

    python -m boolbench.llm.native [--cache-dir cache] [--check]

xllamacpp's prebuilt wheel is compiled for AVX2, so a CPU with AVX-512 (most Xeon and Zen 4
machines) leaves half of its vector width unused: built from xllamacpp's source release with
AVX-512 (and VNNI/BF16 where the CPU has them), the embedded models read prompts 1.47x faster on
the 2-core reference machine (bench/native_llm.py). The judge and the kind steps, most of the
default run, are prompt reading.

Only the instruction sets /proc/cpuinfo lists are enabled, never `-march=native`: that also
turns on AMX, whose matrix kernel crashed on the reference machine (a virtual machine,
probably not granted AMX state). The wheel is kept in `<cache-dir>/native/` under a name made
of the xllamacpp version and the flags, so a second setup on the same kind of CPU installs it
in seconds. Nothing here is required: without AVX-512, cmake or a C++ compiler, or when the
build fails, the prebuilt wheel stays and the step says why (exit 0). The same GGUF and the
same server run either way; only the arithmetic's speed (and its last-bit rounding) differs.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from boolbench.errors import BoolbenchError

log = logging.getLogger("boolbench.llm.native")

# cpuinfo flag -> ggml's CMake option; AVX-512 is worth a build only with the foundation and
# the byte/word and vector-length extensions ggml's kernels use.
AVX512_BASE = ("avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd")
OPTIONAL_FLAGS = {
    "avx512vbmi": "GGML_AVX512_VBMI",
    "avx512_vnni": "GGML_AVX512_VNNI",
    "avx512_bf16": "GGML_AVX512_BF16",
    "avx_vnni": "GGML_AVX_VNNI",
}
# What the prebuilt wheel has, restated because GGML_NATIVE=OFF starts from nothing.
BASE_OPTIONS = ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C", "GGML_BMI2")
# Off: AMX (see above), and the optional parts of xllamacpp's build that need Rust
# (llguidance grammars) or build BoringSSL (HTTPS downloads); the embedded server uses neither.
OFF_OPTIONS = (
    "GGML_NATIVE",
    "GGML_AMX_TILE",
    "GGML_AMX_INT8",
    "GGML_AMX_BF16",
    "LLAMA_LLGUIDANCE",
    "LLAMA_BUILD_BORINGSSL",
    "LLAMA_CURL",
)


def cpu_flags(cpuinfo: str) -> set[str]:
    """The flags of the first processor listed in a /proc/cpuinfo text."""
    for line in cpuinfo.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return set()


def read_cpuinfo() -> str:
    return Path("/proc/cpuinfo").read_text()


def cmake_options(flags: set[str]) -> list[str] | None:
    """ggml's CMake options for a CPU with `flags`; None when it lacks AVX-512 (the prebuilt
    AVX2 wheel is then as fast)."""
    if not all(flag in flags for flag in AVX512_BASE + ("avx2", "fma", "f16c", "bmi2")):
        return None
    on = [*BASE_OPTIONS, "GGML_AVX512"]
    on += [option for flag, option in OPTIONAL_FLAGS.items() if flag in flags]
    return [f"-D{o}=ON" for o in on] + [f"-D{o}=OFF" for o in OFF_OPTIONS]


def wheel_dir(cache_dir: Path, version: str, options: list[str]) -> Path:
    tag = hashlib.sha256(" ".join(options).encode()).hexdigest()[:12]
    return cache_dir / "native" / f"xllamacpp-{version}-{tag}"


def missing_tools() -> list[str]:
    return [tool for tool in ("cmake", "c++", "cc") if shutil.which(tool) is None]


def pip(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pip", *args], env=env, capture_output=True, text=True
    )


def marker() -> Path:
    """The note, inside the installed package, of the CPU flags its build needs (a
    reinstall of the prebuilt wheel removes it with the package)."""
    spec = importlib.util.find_spec("xllamacpp")
    return Path(spec.origin).parent / "boolbench-native.json"


def installed_note() -> dict | None:
    """What `marker()` says of the installed build (None: the prebuilt wheel)."""
    try:
        note = json.loads(marker().read_text())
    except (OSError, AttributeError, ValueError):
        return None
    return note if isinstance(note, dict) else None


def missing_flags() -> list[str]:
    """The CPU flags the installed build needs and this machine lacks (a job on a cluster
    node of another CPU than the one it was built on); [] for the prebuilt wheel."""
    needed = (installed_note() or {}).get("cpu_flags") or []
    if not needed:
        return []
    try:
        have = cpu_flags(read_cpuinfo())
    except OSError:
        return []
    return [flag for flag in needed if flag not in have]


def installed_options() -> list[str] | None:
    """The CMake options of the installed build (None: the prebuilt wheel)."""
    return (installed_note() or {}).get("cmake")


def check_cpu() -> None:
    """Refuse, in one line, to start a build this CPU cannot run (it would die of SIGILL)."""
    missing = missing_flags()
    if missing:
        raise BoolbenchError(
            f"{marker()}: the installed xllamacpp was built (python -m boolbench.llm.native) "
            f"for a CPU with {', '.join(missing)}, which this machine lacks; reinstall the "
            "prebuilt wheel here: pip install --force-reinstall --no-deps --only-binary "
            "xllamacpp xllamacpp"
        )


# Runs in a fresh interpreter: a build that crashes (a kernel the CPU cannot run) kills only it.
# One token from the embedded 0.5B exercises the matrix kernels the jobs use; where its parts
# are not installed, loading the module is all that can be tried.
PROBE = """
import json, sys, urllib.request
from pathlib import Path
import xllamacpp
from boolbench.llm.models import resolve_local_model
from boolbench.llm.server import local_server
try:
    gguf, _ = resolve_local_model(sys.argv[2], sys.argv[1])
except Exception:
    sys.exit(0)
body = {"messages": [{"role": "user", "content": "Say yes."}], "max_tokens": 1}
with local_server(Path(gguf), threads=2, n_parallel=1) as url:
    request = urllib.request.Request(url + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    json.load(urllib.request.urlopen(request, timeout=300))["choices"][0]
"""


def works(cache_dir: Path, model: str = "qwen-0.5b") -> bool:
    """The installed xllamacpp loads and answers one call of an embedded model."""
    probe = [sys.executable, "-c", PROBE, str(cache_dir), model]
    return subprocess.run(probe, capture_output=True).returncode == 0


def build_wheel(version: str, options: list[str], out: Path) -> Path | None:
    """xllamacpp `version` built from its source release with `options`, as a wheel in
    `out` (None, after logging the build's last lines, when it fails)."""
    env = {**os.environ, "CMAKE_ARGS": " ".join(options)}
    env.pop("XLLAMACPP_RELEASE", None)
    with tempfile.TemporaryDirectory() as tmp:
        done = pip(
            "wheel",
            "--no-deps",
            "--no-cache-dir",
            "--no-binary",
            "xllamacpp",
            "-w",
            tmp,
            f"xllamacpp=={version}",
            env=env,
        )
        wheels = list(Path(tmp).glob("xllamacpp-*.whl"))
        if done.returncode != 0 or not wheels:
            tail = "\n".join((done.stdout + done.stderr).splitlines()[-15:])
            log.warning(
                "building xllamacpp %s failed; keeping the prebuilt wheel:\n%s", version, tail
            )
            return None
        out.mkdir(parents=True, exist_ok=True)
        target = out / wheels[0].name
        shutil.move(wheels[0], target)
        return target


def ensure_native(cache_dir: Path, check: bool = False) -> str:
    """Install an xllamacpp built for this CPU where that is faster; returns what it did."""
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return "kept the prebuilt xllamacpp: not an x86-64 Linux machine"
    cpuinfo = read_cpuinfo()
    options = cmake_options(cpu_flags(cpuinfo))
    if options is None:
        return "kept the prebuilt xllamacpp: this CPU has no AVX-512 (the wheel's AVX2 is its best)"
    version = metadata.version("xllamacpp")
    folder = wheel_dir(cache_dir, version, options)
    if installed_options() == options:
        return f"xllamacpp {version} is already built for this CPU"
    cached = sorted(folder.glob("xllamacpp-*.whl"))
    if check:
        return f"would install {cached[0]}" if cached else f"would build into {folder}"
    if cached:
        wheel = cached[0]
    else:
        missing = missing_tools()
        if missing:
            return f"kept the prebuilt xllamacpp: no {', '.join(missing)} to build it with"
        log.info(
            "building xllamacpp %s for this CPU (a few minutes): %s", version, " ".join(options)
        )
        wheel = build_wheel(version, options, folder)
        if wheel is None:
            return "kept the prebuilt xllamacpp: the build failed (above)"
    done = pip("install", "--no-deps", "--force-reinstall", str(wheel))
    if done.returncode == 0 and works(cache_dir):
        needed = [f for f in (*AVX512_BASE, *OPTIONAL_FLAGS) if f in cpu_flags(cpuinfo)]
        marker().write_text(json.dumps({"cpu_flags": needed, "cmake": options}) + "\n")
        return f"installed xllamacpp {version} built for this CPU ({wheel})"
    # A wheel that does not load is worse than the slower one: put the prebuilt one back.
    pip(
        "install",
        "--no-deps",
        "--force-reinstall",
        "--only-binary",
        "xllamacpp",
        f"xllamacpp=={version}",
    )
    shutil.rmtree(folder, ignore_errors=True)
    return f"kept the prebuilt xllamacpp: the build for this CPU did not load ({wheel})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m boolbench.llm.native",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--cache-dir",
        default="cache",
        type=Path,
        help="where built wheels are kept (llm.cache_dir)",
    )
    parser.add_argument("--check", action="store_true", help="say what it would do, do nothing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    log.info(ensure_native(args.cache_dir, check=args.check))
    return 0


if __name__ == "__main__":
    sys.exit(main())
