#!/usr/bin/env bash
# Builds the HTML book into _build/html. Does its own set-up (tools/setup-venv.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-venv.sh
venv="${VENV_DIR:-.venv}"
"$venv/bin/jupyter-book" build -W -n --keep-going . "$@"
echo "Open _build/html/index.html"
