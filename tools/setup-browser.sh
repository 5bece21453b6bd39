#!/usr/bin/env bash
# Makes sure Debian's chromium and poppler-utils are installed: tests/test_browser.py drives chromium
# through playwright, which cannot download a browser of its own here, and tests/test_reader.py renders
# the printed book's pages to images with poppler's pdftoppm. Installs what is missing with apt-get
# when we are root (as in CI); otherwise says so, and the browser tests fail with the same advice.
set -euo pipefail
missing=()
if ! command -v chromium >/dev/null 2>&1 && [ -z "${CHROMIUM:-}" ]; then
  missing+=(chromium)
fi
if ! command -v pdftoppm >/dev/null 2>&1; then
  missing+=(poppler-utils)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's ${missing[*]} for the browser tests"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  if command -v chromium >/dev/null 2>&1; then chromium --version; fi
else
  echo "${missing[*]} missing and this script cannot install them (needs root and apt-get):" \
       "install Debian's ${missing[*]} (or set CHROMIUM to a Chromium binary); the browser tests will fail" >&2
fi
