#!/usr/bin/env bash
# One script for a lent GPU machine (an H200 with no network and no pycuda): install the carried
# wheels, run the `cuda` tests and bench/cuda_bench.py, and write a report under $OUT. It must
# finish within 10 minutes; each step has its own timeout.
#
# Prepare here (network, once):   bash bench/gpu_check.sh --prepare
#   builds .wheelhouse/py312 (pycuda, ../shared/tools/pycuda-wheelhouse.sh) and .wheelhouse/deps
#   (lark: the GPU image lacks it; the tdflow wheel itself as a fallback install).
# Run there (device tool):         run(command="bash bench/gpu_check.sh", carry=[".wheelhouse"])
# Try the CPU-only parts here:     OUT=/tmp/gpu-check bash bench/gpu_check.sh --cpu
#   (installs nothing; the GPU tests skip with cuda_status()'s reason and the benchmark prints
#   the generated kernels' ptxas resource report instead of timings).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/out/gpu-check}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
mode="${1:-gpu}"
log() { echo "gpu_check: $*" | tee -a "$OUT/report.txt"; }

if [ "$mode" = "--prepare" ]; then
  ../shared/tools/pycuda-wheelhouse.sh --python-version 3.12 --out .wheelhouse/py312 || exit 1
  mkdir -p .wheelhouse/deps
  pip download -q --only-binary=:all: --no-deps --python-version 3.12 -d .wheelhouse/deps lark || exit 1
  pip wheel -q --no-deps --no-build-isolation -w .wheelhouse/deps . || exit 1
  ls -la .wheelhouse/py312 .wheelhouse/deps
  exit 0
fi

: > "$OUT/report.txt"
log "date $(date -u +%FT%TZ), host $(hostname), mode $mode"
if [ "$mode" != "--cpu" ]; then
  command -v nvidia-smi >/dev/null && nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1
  SITE="$(mktemp -d)/site"
  timeout 120 "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$SITE" \
      .wheelhouse/py312/*.whl .wheelhouse/deps/lark-*.whl >> "$OUT/report.txt" 2>&1 \
    || log "wheel install failed"
  # tdflow from this tree; the carried wheel if the image cannot build it offline
  timeout 120 "$PY" -m pip install -q --no-index --no-deps --no-build-isolation --target "$SITE" . \
      >> "$OUT/report.txt" 2>&1 \
    || timeout 60 "$PY" -m pip install -q --no-index --no-deps --target "$SITE" \
      .wheelhouse/deps/tdflow-*.whl >> "$OUT/report.txt" 2>&1 || log "tdflow install failed"
  export PYTHONPATH="$SITE"
  # the installed tdflow, not this tree's tdflow/ folder (the facade alone) from the cwd
  export PYTHONSAFEPATH=1
fi
export TDFLOW_CACHE_DIR="$OUT/cache" PYTHONUNBUFFERED=1
"$PY" -c "import tdflow, sys; from tdflow.runtime.backends.cuda_status import cuda_status; \
print('tdflow', tdflow.__file__, 'python', sys.version.split()[0]); print(cuda_status())" \
  2>&1 | tee -a "$OUT/report.txt"

log "--- cuda tests (pytest -m cuda tests/cuda)"
timeout 300 "$PY" -m pytest -q -p no:cacheprovider -m cuda tests/cuda -x -rs 2>&1 \
  | tail -40 | tee "$OUT/cuda_tests.txt" >> "$OUT/report.txt"
log "--- bench/cuda_bench.py"
timeout 240 "$PY" bench/cuda_bench.py 2>&1 | tee "$OUT/cuda_bench.txt" >> "$OUT/report.txt"
rm -rf "$OUT/cache"
log "done"
