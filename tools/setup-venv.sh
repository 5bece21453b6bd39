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
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -r requirements.txt
  echo "$want" > "$stamp"
fi
