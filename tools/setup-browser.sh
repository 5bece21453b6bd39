#!/usr/bin/env bash
# Makes sure Debian's chromium is installed: tests/test_browser.py drives it through playwright,
# which cannot download a browser of its own here. Installs it with apt-get when it is missing
# and we are root (as in CI); otherwise says so, and the browser test fails with the same advice.
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM:-}" ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing Debian's chromium for the browser test"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  chromium --version
else
  echo "chromium is missing and this script cannot install it (needs root and apt-get):" \
       "install Debian's chromium, or set CHROMIUM to a Chromium binary; tests/test_browser.py will fail" >&2
fi
