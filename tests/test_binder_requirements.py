"""Binder's environment (binder/): PyTorch's CPU build, the book's package installed non-editably,
a patched jupyter-server, and nothing to build or test the book.

Two checks. The static one reads binder/requirements.txt and binder/postBuild and fails on a wrong
pin even offline. The resolution asks pip what it would install (``--dry-run --report``) and fails
on any CUDA package. These machines cannot reach PyTorch's index (no retries: it fails at once) and
find the CPU wheel in a local folder; on Binder the same pin comes from PyTorch's index. Either
way, a pin that pulls the CUDA build (``torch==2.13.0`` without ``+cpu``) brings nvidia-* and
triton into the report, and this test fails.

What this proves: the pins are the intended ones, and pip can resolve the file into a set without
CUDA and without conflicts. What it cannot prove, and only a launch on mybinder.org shows: that
PyTorch's index serves ``torch==2.13.0+cpu`` (here a local wheel stands in for it), that repo2docker
builds the image, and that Binder starts it. It installs and imports nothing either: that the
installed libraries run the book is tests/test_jupyterlab.py's job (the wheel in an environment made
from this file, every chapter in JupyterLab).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
BINDER = ROOT / "binder"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
SERVER_FIXED_IN = Version("2.20")  # jupyter-server 2.20 fixes CVE-2026-44727 (stored XSS)
# Build, test and lint tools: in the development requirements, never in a reader's image.
TOOLS = {"jupyter-book", "sphinx", "sphinxcontrib-bibtex", "pytest", "pytest-xdist", "nbval", "playwright", "ruff",
         "hypothesis", "brotli"}  # brotli: the book's build writes its subset icon fonts as woff2
# Pinned only in the development requirements (tools/execute_notebooks.py's; jupyter-server pulls its own).
# fonttools too: pinned for the build's font subsetting, and a reader's image gets it through matplotlib.
DEV_TOOLS = TOOLS | {"nbclient", "nbformat", "fonttools", "build", "twine"}
INTERFACE = {"jupyter-server", "jupyterlab", "jupyterlab-myst"}  # what a reader's JupyterLab needs pinned
CUDA = re.compile(r"^(nvidia-.*|cuda-.*|triton)$")


def parse(path: Path) -> tuple[list[str], dict[str, Requirement], list[str]]:
    """(option lines, requirements by canonical name, local references) of a requirements file."""
    options, requirements, local = [], {}, []
    for raw in path.read_text().splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-e", "--editable", ".", "/", "file:", "-r", "-c", "--requirement", "--constraint")):
            local.append(line)  # as repo2docker sees it: a reason to install after copying the repository
        elif line.startswith("-"):
            options.append(line)
        else:
            requirement = Requirement(line)
            requirements[canonicalize_name(requirement.name)] = requirement
    return options, requirements, local


def exact_pin(requirement: Requirement) -> str:
    specifiers = list(requirement.specifier)
    assert len(specifiers) == 1 and specifiers[0].operator == "==", f"{requirement}: expected an exact pin (==)"
    return specifiers[0].version


def test_binder_requirements_pins() -> None:
    options, binder, local = parse(BINDER / "requirements.txt")
    _, root, _ = parse(ROOT / "requirements.txt")
    assert not local, f"binder/requirements.txt: local references {local} (the package is installed by postBuild)"
    assert f"--extra-index-url {CPU_INDEX}" in options, "binder/requirements.txt: PyTorch's CPU index is missing"
    pins = {name: exact_pin(requirement) for name, requirement in binder.items()}
    assert pins["torch"] == f"{exact_pin(root['torch'])}+cpu", "torch: expected the root pin's CPU build (+cpu)"
    assert Version(pins["jupyter-server"]) >= SERVER_FIXED_IN, f"jupyter-server {pins['jupyter-server']} < 2.20"
    assert INTERFACE <= set(pins), f"binder/requirements.txt: missing {sorted(INTERFACE - set(pins))}"
    assert not DEV_TOOLS & set(pins), f"binder/requirements.txt: build or test tools {sorted(DEV_TOOLS & set(pins))}"
    # Everything else the chapters need, at the same pins as the development environment.
    runtime, here = {name for name in root if name not in DEV_TOOLS} - {"torch"}, set(pins) - {"torch"}
    assert runtime == here, f"binder/requirements.txt differs from requirements.txt: {sorted(runtime ^ here)}"
    for name in runtime:
        assert pins[name] == exact_pin(root[name]), f"{name}: {pins[name]} here, {exact_pin(root[name])} in root"


def test_binder_installs_the_package_non_editably() -> None:
    commands = [line.strip() for line in (BINDER / "postBuild").read_text().splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    installs = [c for c in commands if "pip install" in c]
    assert installs == ["python -m pip install --no-cache-dir --no-deps ."], f"binder/postBuild: {installs}"
    assert (BINDER / "postBuild").stat().st_mode & 0o111, "binder/postBuild: not executable"
    assert (BINDER / "runtime.txt").read_text().strip() == (ROOT / "runtime.txt").read_text().strip()
    # --no-deps: the package's own dependencies must already be pinned in binder/requirements.txt.
    _, binder, _ = parse(BINDER / "requirements.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for dependency in map(Requirement, project["dependencies"]):
        name = canonicalize_name(dependency.name)
        assert name in binder, f"pyproject.toml needs {dependency}; binder/requirements.txt does not install it"
        pin = exact_pin(binder[name])
        assert dependency.specifier.contains(pin, prereleases=True), f"{dependency}: binder pins {name}=={pin}"


def resolve(requirements: Path) -> list[dict]:
    """What ``pip install -r requirements`` would install into an empty environment (pip's report)."""
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--quiet", "--report", "-", "--ignore-installed",
               "--retries", "0", "--timeout", "3", "--disable-pip-version-check", "-r", str(requirements)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert result.returncode == 0, f"pip could not resolve {requirements.name}:\n{result.stderr[-3000:]}"
    return json.loads(result.stdout)["install"]


def check_resolution(installed: list[dict]) -> list[str]:
    """The problems in a pip report: CUDA packages, editable installs, an old jupyter-server, dev tools."""
    problems = []
    versions = {canonicalize_name(item["metadata"]["name"]): item["metadata"]["version"] for item in installed}
    problems += [f"CUDA package {name} {v}" for name, v in versions.items() if CUDA.match(name)]
    problems += [f"editable install of {item['metadata']['name']}" for item in installed
                 if item["download_info"].get("dir_info", {}).get("editable")]
    problems += [f"build or test tool {name} {versions[name]}" for name in sorted(TOOLS & set(versions))]
    if "jupyter-server" not in versions or Version(versions["jupyter-server"]) < SERVER_FIXED_IN:
        problems.append(f"jupyter-server {versions.get('jupyter-server')} (needs >= {SERVER_FIXED_IN})")
    if not versions.get("torch", "").endswith("+cpu"):
        problems.append(f"torch {versions.get('torch')} is not the CPU build")
    return problems


def test_check_resolution_catches_cuda_editable_and_old_server() -> None:
    def item(name: str, version: str, editable: bool = False) -> dict:
        return {"metadata": {"name": name, "version": version},
                "download_info": {"url": "file:///x", "dir_info": {"editable": True}} if editable else {"url": "x"}}

    good = [item("torch", "2.13.0+cpu"), item("jupyter_server", "2.21.1")]
    assert check_resolution(good) == []
    bad = [item("torch", "2.13.0"), item("nvidia-cublas-cu12", "12.8"), item("triton", "3.5"),
           item("jupyter_server", "2.17.0"), item("transformer_lib", "0.1.0", editable=True), item("pytest", "9.2.0")]
    assert len(check_resolution(bad)) == 6


def test_binder_requirements_resolve_cpu_only() -> None:
    installed = resolve(BINDER / "requirements.txt")
    assert check_resolution(installed) == []
