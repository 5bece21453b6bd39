#!/usr/bin/env bash
# Runs every test: the library's unit tests and, with nbval, every committed notebook.
# Does its own set-up (tools/setup-venv.sh). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-venv.sh
venv="${VENV_DIR:-.venv}"
"$venv/bin/ruff" check .
exec "$venv/bin/python" -m pytest "$@"
