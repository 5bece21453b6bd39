#!/usr/bin/env bash
# The whole book as one PDF, printed by chromium from the built HTML (tools/build_pdf.py): builds
# the HTML book first (tools/build-book.sh), unless given --no-build. The PDF goes to
# _build/html/_static/the-transformer-computed.pdf, which the intro links (a build without it shows
# the intro's mention as plain text: book/_ext/site_pages.py). Makes sure chromium is there first
# (tools/setup-browser.sh). .github/workflows/book.yml runs this and publishes _build/html.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="${VENV_DIR:-.venv}"
bash tools/setup-browser.sh
if [[ "${1:-}" == "--no-build" ]]; then
  shift
else
  bash tools/build-book.sh
fi
"$venv/bin/python" tools/build_pdf.py _build/html "$@"
