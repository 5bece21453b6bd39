#!/usr/bin/env bash
# Runs every test: the library's unit tests and, with nbval, every committed notebook; the
# browser test (tests/test_browser.py) builds the book and opens it in chromium.
# Does its own set-up (tools/setup-venv.sh, tools/setup-browser.sh). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-venv.sh
bash tools/setup-browser.sh
venv="${VENV_DIR:-.venv}"
"$venv/bin/ruff" check .
exec "$venv/bin/python" -m pytest "$@"
