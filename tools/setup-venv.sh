#!/usr/bin/env bash
# Creates the virtual environment (default .venv, or $VENV_DIR) and installs requirements.txt into it.
# Safe to run again: it reinstalls only when requirements.txt or pyproject.toml changed.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${VENV_DIR:-.venv}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null || python=python3
if [ ! -x "$venv/bin/python" ]; then
  echo "Creating virtual environment $venv with $("$python" --version)"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want=$(cat requirements.txt pyproject.toml | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  started=$(date +%s)
  echo "Installing requirements.txt into $venv (the first time, several minutes: PyTorch, Jupyter Book," \
       "JupyterLab, the test tools; about 2 GB with PyTorch's CPU build)"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  # one line per package pip collects, so that a long install shows where it is (pip's errors go to
  # stderr, unfiltered; with pipefail, pip's failure is the pipeline's)
  "$venv/bin/python" -m pip install --progress-bar off -r requirements.txt \
    | { grep --line-buffered "^Collecting" || true; } | sed -u "s/^/  /"
  echo "$want" > "$stamp"
  echo "Environment ready in $(( $(date +%s) - started )) s"
fi
