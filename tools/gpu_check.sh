#!/usr/bin/env bash
# The book on a CUDA GPU: do the chapters train and decode there, as a reader's Colab GPU would run them?
# For the device tool's machine (one GPU, its own python3 with a CUDA build of torch, no network).
#
#   bash tools/gpu_check.sh prepare   # here, with a network: the wheels that machine lacks, and the
#                                     # package's own wheel, into .device/ (ignored, carried)
#   bash tools/gpu_check.sh run       # there, from the repository root: writes its logs to $OUT
#
# run: installs the package from its wheel; executes every notebook under nbval (the chapters' own
# pick_device() puts their training and decoding on the GPU); trains and decodes through the library on
# CUDA and on the CPU and compares the two; trains the base preset with the torchrun command on NCCL.
set -uo pipefail
cd "$(dirname "$0")/.."
here=.device
case "${1:-}" in
prepare)
  py="${VENV_DIR:-.venv}/bin/python"
  rm -rf "$here" && mkdir -p "$here/wheels" "$here/site"
  grep -qsx "/$here/" .git/info/exclude || echo "/$here/" >>.git/info/exclude
  cp3=(--python-version 3.12 --implementation cp --only-binary=:all: --platform any
       --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64)
  # The kernel, nbval and the book's own extras at requirements.txt's pins; bertviz without its torch
  "$py" -m pip download -q "${cp3[@]}" -d "$here/wheels" -r <(grep -E '^(ipykernel|ipywidgets|nbclient|nbformat|plotly|nbval)==' requirements.txt)
  "$py" -m pip download -q "${cp3[@]}" -d "$here/wheels" --no-deps "$(grep '^bertviz==' requirements.txt)" boto3 jmespath s3transfer
  # What the machine's image already holds (the device tool's KINDS.md) stays its own; widgetsnbextension
  # is the classic notebook's copy of the widgets' scripts, which nbval does not load.
  (cd "$here/wheels" && rm -f pygments-* attrs-* packaging-* pytest-* pluggy-* iniconfig-* coverage-* psutil-* \
     python_dateutil-* typing_extensions-* tzdata-* narwhals-* widgetsnbextension-*)
  # bertviz imports botocore.exceptions; botocore's 16 MB of service descriptions (data/) are not read by it
  "$py" -m pip download -q "${cp3[@]}" -d "$here/tmp" --no-deps botocore
  "$py" -m zipfile -e "$here"/tmp/botocore-*.whl "$here/site" && rm -rf "$here/site/botocore/data" "$here/tmp"
  "$py" -m build --wheel -o "$here/wheels" . >"$here/build.log" 2>&1 || { cat "$here/build.log"; exit 1; }
  du -sh "$here"
  ;;
run)
  out="${OUT:-/tmp/gpu-check}"
  mkdir -p "$out"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  lscpu | grep -m1 'Model name'
  python3 -m pip install -q --no-index --no-deps "$here"/wheels/*.whl 2>&1 | tail -3
  export PYTHONPATH="$PWD/$here/site"
  scratch=$(mktemp -d)
  # The library from the installed wheel, as a reader's pip install gives it: run from outside the checkout
  (cd "$scratch" && python3 -c "import torch, transformer_lib as t; print('torch', torch.__version__, 'on',
torch.cuda.get_device_name(), '| transformer_lib from', t.__file__)")
  started=$(date +%s)
  # 1. Every notebook, outputs compared with the stored (CPU) ones by nbval's rules; a worker a notebook
  # (--dist loadfile: one kernel runs a notebook's cells in order)
  OMP_NUM_THREADS=1 timeout 330 python3 -m pytest book -p no:cacheprovider -n 12 --dist loadfile -rA --junitxml="$out/nbval.xml" \
    >"$out/nbval.log" 2>&1
  echo "notebooks: exit $? in $(( $(date +%s) - started )) s; cells failed, by notebook:"
  grep -E "^(FAILED|ERROR) " "$out/nbval.log" | cut -d: -f1 | sort | uniq -c
  grep -E "^=+ .*(passed|failed)" "$out/nbval.log"
  # 2. The library on CUDA against the CPU: training to the target, greedy and beam decoding, sampling
  (cd "$scratch" && timeout 120 python3 "$OLDPWD/tools/gpu_check.py" 2>&1 | tee "$out/library.log")
  # 3. The torchrun command on NCCL (one process: one GPU), the paper's base model on the book's corpus, DDP and FSDP2
  for strategy in ddp fsdp; do
    (cd "$scratch" && timeout 90 python3 -m transformer_lib.train.launch --nproc-per-node 1 --preset base \
      --strategy "$strategy" --steps 60 --batch-size 256 --device cuda --log-every 20 --out "run-$strategy" \
      --translate "the cat sees the dog ." 2>&1 | tail -6 | tee "$out/train-$strategy.log")
  done
  nvidia-smi --query-gpu=memory.used,utilization.gpu --format=csv
  ;;
*)
  echo "usage: bash tools/gpu_check.sh prepare|run" >&2
  exit 2
  ;;
esac
