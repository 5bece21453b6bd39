#!/usr/bin/env bash
# Runs every test: the library's unit tests and, with nbval, every committed notebook; the
# browser tests build the book once and open it in chromium; tests/test_jupyterlab.py runs every
# chapter in JupyterLab from the installed wheel, on one thread, and compares its outputs with the
# stored ones. Does its own set-up (tools/setup-venv.sh, tools/setup-browser.sh). Extra arguments
# go to pytest. At the end it prints where the time went (tools/ci_durations.py), so that growth is seen.
#
#   bash tools/test.sh                  # all tests
#   bash tools/test.sh --portability    # all tests, and the appendices once more as another CPU would run
#                                       # them (the chapters are, in JupyterLab): on one thread with the CPU
#                                       # dispatch lowered (ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1),
#                                       # the distributed tests under stress, and the notebooks that train
#                                       # once more under BOOK_SEED=1 and 2; .ci/run uses this
set -euo pipefail
cd "$(dirname "$0")/.."
portability=0
if [ "${1:-}" = "--portability" ]; then
  portability=1
  shift
fi
started=$(date +%s)
logs="$(mktemp -d)"
# The reader's walk through every page (tests/test_reader.py) takes no screenshots here: they are for a
# person to look at (run that test alone for them), and 34 full pages cost a minute and a half of CPU.
export BOOK_SCREENSHOTS=0
# The reader's environment (tests/reader_env.py: Binder's libraries, for tests/test_jupyterlab.py and
# test_installed.py; made once, then reused) is made beside the project's: each is one pip, mostly on one
# core, and a test that made it would take a core from the others for a minute and a half.
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null || python=python3
"$python" -c 'import sys; sys.path.insert(0, "tests"); import reader_env; reader_env.reader_venv()' \
  >"$logs/reader-env.log" 2>&1 &
reader_env=$!
bash tools/setup-venv.sh
bash tools/setup-browser.sh
if ! wait "$reader_env"; then  # the tests that need it try again, and fail saying why
  echo "The reader's environment could not be made here:"
  tail -20 "$logs/reader-env.log"
fi
venv="${VENV_DIR:-.venv}"
echo "setup $(( $(date +%s) - started ))" > "$logs/phases"
"$venv/bin/ruff" check .

lowered=""
if [ "$portability" = 1 ]; then
  # The stored outputs were computed on one machine with two threads (the main run below checks
  # them so). Another machine differs in its vector instructions and its number of threads. The
  # chapters are run so by tests/test_jupyterlab.py (one thread, ATEN_CPU_CAPABILITY=default, the
  # installed wheel, compared by nbval's rules); the appendices, which it does not open, get that
  # run here, beside the main run, so that an output which depends on either fails here rather than
  # on a reader's machine.
  appendices=$(ls book/*.ipynb | grep -v '^book/[0-9][0-9]_' || true)
  (
    status=0
    if [ -n "$appendices" ]; then
      lane_start=$(date +%s)
      # shellcheck disable=SC2086  # one argument per appendix
      ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1 "$venv/bin/python" -m pytest $appendices -p no:cacheprovider \
        --junitxml="$logs/default-isa.xml" "$@" >"$logs/default-isa.log" 2>&1 || status=1
      echo "appendices-default-isa-one-thread $(( $(date +%s) - lane_start ))" >> "$logs/phases"
    fi
    lane_start=$(date +%s)
    # The distributed tests beside the appendix's demo, four at a time, and a thread taking ports as a busy
    # machine's programs do (tests/test_rendezvous_stress.py): no process group may find its meeting place
    # taken. It runs tests/test_distributed.py, which the main run leaves out for that reason.
    OMP_NUM_THREADS=1 "$venv/bin/python" -m pytest tests/test_rendezvous_stress.py -m stress -p no:cacheprovider \
      --junitxml="$logs/stress.xml" "$@" >"$logs/stress.log" 2>&1 || status=1
    echo "rendezvous-stress $(( $(date +%s) - lane_start ))" >> "$logs/phases"
    exit "$status"
  ) &
  lowered=$!
fi

seeds_lane=""
if [ "$portability" = 1 ]; then
  # The seed lane (issue 50): every notebook that trains (benchmarks/seed_claims.py's TRAINING_NOTEBOOKS)
  # re-run with nbclient under BOOK_SEED=1 and BOOK_SEED=2 (transformer_lib.seeding), one thread, beside the
  # main run. The asserts are the pages' claims about training, so every one must hold on these seeds too
  # (--strict); the outputs are the stored seed's, so they are not compared. Seeds 0 to 9: run it by hand.
  (
    lane_start=$(date +%s)
    status=0
    "$venv/bin/python" benchmarks/seed_claims.py --seeds 1 2 --strict --no-write >"$logs/seeds.log" 2>&1 || status=1
    echo "notebooks-book-seed-1-and-2 $(( $(date +%s) - lane_start ))" >> "$logs/phases"
    exit "$status"
  ) &
  seeds_lane=$!
fi

main_start=$(date +%s)
status=0
# Three workers (pytest-xdist), one test module or notebook at a time each; the modules that share the
# built book or the reader's environment stay together on one worker (tests/conftest.py, SHARED_GROUPS),
# the long groups start first, those two mid-run (LONGEST_FIRST says why), and each test process runs
# torch on one thread. Three on two cores: much of a browser test is waiting (for a page, a kernel, a
# figure), and with two workers a fresh clone's CI kept the cores 69 % busy (1,693 s of CPU in 1,223 s).
# With --portability, tests/test_distributed.py runs in the lane beside this one, inside the stress test.
main_args=(-m "not stress")
if [ -n "$lowered" ]; then main_args+=(--ignore=tests/test_distributed.py); fi
"$venv/bin/python" -m pytest -n 3 "${main_args[@]}" --junitxml="$logs/main.xml" "$@" || status=1
echo "main-run $(( $(date +%s) - main_start ))" >> "$logs/phases"
if [ -n "$lowered" ]; then
  wait "$lowered" || status=1
  echo "== appendices with ATEN_CPU_CAPABILITY=default OMP_NUM_THREADS=1 (the chapters: tests/test_jupyterlab.py)"
  cat "$logs/default-isa.log" 2>/dev/null || true
  echo "== the distributed tests beside the demo and a busy machine (tests/test_rendezvous_stress.py)"
  cat "$logs/stress.log"
fi
if [ -n "$seeds_lane" ]; then
  wait "$seeds_lane" || status=1
  echo "== notebooks that train, with BOOK_SEED=1 and BOOK_SEED=2 (outputs not compared, asserts required)"
  cat "$logs/seeds.log"
fi
echo "total $(( $(date +%s) - started ))" >> "$logs/phases"
"$venv/bin/python" tools/ci_durations.py "$logs" || true
exit "$status"
