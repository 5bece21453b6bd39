"""What a reader installs, for the tests that run the book as readers do (tests/test_jupyterlab.py,
tests/test_installed.py): the package's wheel, and a virtual environment with Binder's libraries.

The environment is created once per ``binder/requirements.txt`` and Python version, under the
temporary folder (``$TRANSFORMER_BOOK_READER_VENV`` names another place), and reused by later test
sessions: on a 2-core machine it takes about a minute and a half and 1.7 GB. It holds only what
``pip install -r binder/requirements.txt`` gives (torch from the local CPU wheel here, as these
machines cannot reach PyTorch's index; Binder takes the same pin from that index). The package is
not in it until a test installs it (``install``); the checkout is never on its path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "binder" / "requirements.txt"
# What the package is built from: the rest of the repository (book/, tests/) stays out of the wheel.
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE", "transformer_lib")
COPY_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")


def run(*command: str | Path, **kwargs) -> subprocess.CompletedProcess:
    """Run ``command`` (by default without the checkout on the path); on failure, an assertion with its
    output (pip's last lines say why)."""
    kwargs.setdefault("env", clean_env())
    result = subprocess.run([str(c) for c in command], capture_output=True, text=True, **kwargs)
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{(result.stdout + result.stderr)[-4000:]}"
    return result


def package_source(into: Path) -> Path:
    """A copy of what the package is built from (building in the checkout would leave build/ there)."""
    into.mkdir(parents=True, exist_ok=True)
    for name in PACKAGE_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=COPY_IGNORE)
        else:
            shutil.copy2(source, into / name)
    return into


def build_wheel(into: Path) -> Path:
    """``pip wheel --no-deps .`` of the package; the wheel's path."""
    source = package_source(into / "source")
    run(sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", into / "dist", source)
    (wheel,) = (into / "dist").glob("transformer_lib-*.whl")
    return wheel


def reader_venv() -> Path:
    """The reader's environment (created on first use, then reused); its folder."""
    # --retries 0: PyTorch's index is unreachable here (the CPU wheel comes from a local folder)
    return cached_venv("book-reader", ["--retries", "0", "-r", str(REQUIREMENTS)], REQUIREMENTS.read_bytes(),
                       os.environ.get("TRANSFORMER_BOOK_READER_VENV"))


def cached_venv(name: str, pip_arguments: list[str], key: bytes, folder: str | None = None) -> Path:
    """A private virtual environment with what ``pip install *pip_arguments`` gives, created once per
    ``key`` (what it installs) and Python version under the temporary folder (or in ``folder``), and
    reused by later test sessions; its folder. For tools that must not go into the project's own
    environment (tests/test_release.py's cffconvert pins an old jsonschema)."""
    digest = hashlib.sha256(key + sys.version.encode()).hexdigest()[:12]
    venv = Path(folder or Path(tempfile.gettempdir()) / f"{name}-{digest}")
    done = venv / ".installed"
    if not done.exists():
        shutil.rmtree(venv, ignore_errors=True)
        run(sys.executable, "-m", "venv", venv)
        run(venv / "bin" / "python", "-m", "pip", "install", "--quiet", *pip_arguments)
        done.write_bytes(key)
    return venv


def python(venv: Path) -> Path:
    return venv / "bin" / "python"


def uninstall(venv: Path) -> None:
    """Take the package out of ``venv``, and check that it cannot be imported there any more."""
    run(python(venv), "-m", "pip", "uninstall", "--quiet", "--yes", "transformer_lib")
    gone = "import importlib.util, sys; sys.exit(importlib.util.find_spec('transformer_lib') is not None)"
    run(python(venv), "-c", gone, cwd=venv)


def install(venv: Path, requirement: str | Path, *options: str) -> None:
    run(python(venv), "-m", "pip", "install", "--quiet", "--retries", "0", *options, requirement)


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without anything that would put the checkout on the path."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return {**env, **extra}


def installed_location(venv: Path, cwd: Path) -> Path:
    """Where ``import transformer_lib`` finds the package when run from ``cwd`` in ``venv``."""
    out = run(python(venv), "-c", "import transformer_lib; print(transformer_lib.__file__)", cwd=cwd, env=clean_env())
    return Path(out.stdout.strip()).parent
