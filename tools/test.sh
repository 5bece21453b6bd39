#!/usr/bin/env bash
# Runs every test: the library's unit tests and, with nbval, every committed notebook; the
# browser test (tests/test_browser.py) builds the book and opens it in chromium.
# Does its own set-up (tools/setup-venv.sh, tools/setup-browser.sh). Extra arguments go to pytest.
#
#   bash tools/test.sh                  # all tests
#   bash tools/test.sh --portability    # all tests, then the notebooks again as another CPU would run
#                                       # them, two runs side by side: on one thread (OMP_NUM_THREADS=1), and
#                                       # on one thread with the CPU dispatch lowered (ATEN_CPU_CAPABILITY=default);
#                                       # .ci/run uses this
set -euo pipefail
cd "$(dirname "$0")/.."
portability=0
if [ "${1:-}" = "--portability" ]; then
  portability=1
  shift
fi
bash tools/setup-venv.sh
bash tools/setup-browser.sh
venv="${VENV_DIR:-.venv}"
"$venv/bin/ruff" check .
"$venv/bin/python" -m pytest "$@"
if [ "$portability" = 1 ]; then
  # The stored outputs were computed on one machine with two threads; these two runs change what
  # differs between machines (the vector instructions torch uses, the number of threads), so that
  # an output which depends on them fails here rather than on a reader's machine. Both run on one
  # thread, side by side (one core each): the first also lowers the CPU dispatch.
  logs="$(mktemp -d)"
  echo "== notebooks with ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1, and with OMP_NUM_THREADS=1, side by side"
  ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1 "$venv/bin/python" -m pytest book -p no:cacheprovider "$@" \
    >"$logs/default-isa.log" 2>&1 &
  lowered=$!
  OMP_NUM_THREADS=1 "$venv/bin/python" -m pytest book -p no:cacheprovider "$@" >"$logs/one-thread.log" 2>&1 &
  one_thread=$!
  status=0
  wait "$lowered" || status=1
  echo "== notebooks with ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1"
  cat "$logs/default-isa.log"
  wait "$one_thread" || status=1
  echo "== notebooks with OMP_NUM_THREADS=1"
  cat "$logs/one-thread.log"
  exit "$status"
fi
