"""The conda specs in envs/ (for `--sdm conda`) must agree with pyproject's dependencies."""

import re
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CONDA_TO_PYPI = {"pytorch": "torch"}
# Needed by the Snakemake process itself (pygments: `snakemake --report`; psutil: passing a
# stop signal on to the jobs), never inside a job.
WORKFLOW_ONLY = {"snakemake", "jsonschema", "pyyaml", "pygments", "psutil"}


def name_of(requirement: str) -> str:
    name = re.split(r"[<>=!~\[ ;@]", requirement.strip(), maxsplit=1)[0]
    return name.lower().replace("_", "-")


def version_of(requirement: str) -> str:
    return requirement.strip()[len(name_of(requirement)) :].strip()


def env_requirements() -> dict[str, dict[str, str]]:
    """env file -> {PyPI name: version spec}."""
    packages = {}
    for path in sorted((REPO / "envs").glob("*.yaml")):
        spec = yaml.safe_load(path.read_text())
        requirements = {}
        for dep in spec["dependencies"]:
            if isinstance(dep, dict):
                requirements |= {name_of(p): version_of(p) for p in dep.get("pip", [])}
            elif name_of(dep) not in ("python", "pip"):
                name = CONDA_TO_PYPI.get(name_of(dep), name_of(dep))
                requirements[name] = version_of(dep)
        packages[path.name] = requirements
    return packages


def env_packages() -> dict[str, set[str]]:
    return {env: set(reqs) for env, reqs in env_requirements().items()}


def project_requirements() -> dict[str, str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {name_of(d): version_of(d) for d in project["dependencies"]}


def project_dependencies() -> set[str]:
    return set(project_requirements())


def test_every_env_package_is_a_project_dependency():
    deps = project_dependencies()
    for env, names in env_packages().items():
        assert names <= deps, f"envs/{env} has packages missing from pyproject: {names - deps}"


def test_every_job_dependency_is_in_some_env():
    in_envs = set().union(*env_packages().values())
    missing = project_dependencies() - WORKFLOW_ONLY - in_envs
    assert not missing, f"pyproject dependencies in no envs/*.yaml: {missing}"


def test_every_rule_uses_an_existing_env():
    for smk in (REPO / "rules").glob("*.smk"):
        for env in re.findall(r'conda:\s*"\.\./(envs/[^"]+)"', smk.read_text()):
            assert (REPO / env).exists(), f"{smk.name} refers to missing {env}"


def test_versions_agree():
    project = project_requirements()
    for env, requirements in env_requirements().items():
        for name, version in requirements.items():
            assert version == project[name], f"envs/{env}: {name}{version} vs {project[name]}"
