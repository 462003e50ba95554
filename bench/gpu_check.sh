#!/usr/bin/env bash
# One script for a lent GPU machine (an H200 with no network and no pycuda): install the carried
# wheels, run the `cuda` tests, bench/cuda_bench.py and ONNX's backend suite on the cuda device,
# and write a report under $OUT. It must finish within 10 minutes; each step has its own timeout.
#
# Prepare here (network, once):   bash bench/gpu_check.sh --prepare
#   builds .wheelhouse/py312 (pycuda, ../shared/tools/pycuda-wheelhouse.sh) and .wheelhouse/deps
#   (lark: the GPU image lacks it; the tdflow wheel itself as a fallback install).
# Fill the cubin cache here (no GPU needed, ~20 min on 2 cores; the GPU tests compile ~1,500
#   translation units, which alone would outlast a lease):
#   for k in 0 1; do TDFLOW_CACHE_DIR=$PWD/.gpucache python bench/gpu_precompile.py --shard $k/2 & done
# Run there (device tool):         run(command="bash bench/gpu_check.sh", carry=[".wheelhouse", ".gpucache"])
# Try the CPU-only parts here:     OUT=/tmp/gpu-check bash bench/gpu_check.sh --cpu
#   (installs nothing; the GPU tests skip with cuda_status()'s reason and the benchmark prints
#   the generated kernels' ptxas resource report instead of timings).
# GPU_CHECK_BUDGET=S: the seconds the whole script may take before ONNX node tests stop (480).
# Steps can be left out: GPU_CHECK_SKIP="bench onnx-node" (words: tests family bench onnx-models
#   onnx-node bench-ab; "family" leaves out the one test that runs every family case, ~1,500 kernels).
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
  nvcc --version > .wheelhouse/nvcc-version.txt
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
START=$SECONDS
skip() { case " ${GPU_CHECK_SKIP:-} " in *" $1 "*) log "($1 left out)"; return 0;; esac; return 1; }
# The carried cubin cache, private to this user as tdflow requires (it refuses a folder others
# may write); its keys hold nvcc's version text, so say whether this nvcc's matches.
CACHE="$(mktemp -d)/tdflow-cache"
FILL=1  # fill the cache here, on every core, when the carried one cannot serve
if [ -d .gpucache ]; then
  cp -r .gpucache "$CACHE" && chmod -R go-rwx "$CACHE"
  log "carried cubins: $(find "$CACHE" -name '*.cubin' | wc -l)"
  if [ -f .wheelhouse/nvcc-version.txt ] && command -v nvcc >/dev/null; then
    if nvcc --version | cmp -s - .wheelhouse/nvcc-version.txt; then
      log "nvcc matches the cache's"; FILL=0
    else log "nvcc differs from the cache's (cubins will be rebuilt): $(nvcc --version | tail -1)"; fi
  fi
fi
FILL="${GPU_CHECK_FILL:-$FILL}"  # 1: fill even so (a partial carried cache)
export TDFLOW_CACHE_DIR="$CACHE" PYTHONUNBUFFERED=1
"$PY" -c "import tdflow, sys; from tdflow.runtime.backends.cuda_status import cuda_status; \
print('tdflow', tdflow.__file__, 'python', sys.version.split()[0]); print(cuda_status())" \
  2>&1 | tee -a "$OUT/report.txt"
command -v g++ >/dev/null || log "no g++ here: native CPU kernels fall back to numpy"
if [ "$FILL" = 1 ] && [ "$mode" != "--cpu" ] && ! skip tests; then
  log "--- filling the cubin cache on 16 cores ($((SECONDS - START)) s)"
  for k in $(seq 0 15); do
    timeout 240 "$PY" bench/gpu_precompile.py --shard "$k/16" >> "$OUT/precompile.txt" 2>&1 &
  done
  wait; log "cache filled: $(find "$CACHE" -name '*.cubin' | wc -l) cubins"
fi

# The CLI on the GPU, as a user runs it (its exit status too: pycuda aborts a process that
# leaves a context pushed)
for ex in mlp gpt; do
  timeout 120 "$PY" -m tdflow run --device cuda --repeat 20 "examples/$ex.mlir" >> "$OUT/report.txt" 2>&1
  log "tdflow run --device cuda examples/$ex.mlir: rc $?"
done
# pytest-xdist spreads ONNX's cases over the cores where it is installed (the GPU image has it)
XDIST=""; "$PY" -c "import xdist" 2>/dev/null && XDIST="-n 12"
# The benchmark first, alone on the machine, so nothing else disturbs its timings.
if ! skip bench; then
  log "--- bench/cuda_bench.py ($((SECONDS - START)) s)"
  timeout 150 "$PY" bench/cuda_bench.py > "$OUT/cuda_bench.txt" 2>&1
  log "cuda_bench rc $?"; tail -30 "$OUT/cuda_bench.txt" >> "$OUT/report.txt"
fi
# The same matmuls and MLP with the strided shared-tile layout (the float4 one is the default),
# then on TF32 tensor cores (both switches are read when code is generated), in the same
# session as the default kernels above.
if ! skip bench-ab; then
  for sw in TDFLOW_CUDA_SIMT_VEC4=0 TDFLOW_CUDA_TF32=1; do
    log "--- bench/cuda_bench.py --only matmul mlp with $sw ($((SECONDS - START)) s)"
    env "$sw" timeout 100 "$PY" bench/cuda_bench.py --only matmul mlp >> "$OUT/cuda_bench.txt" 2>&1
    log "rc $?"; tail -5 "$OUT/cuda_bench.txt" >> "$OUT/report.txt"
  done
fi
# The cuda tests (one process: the GPU tests run their cases in one loop) beside ONNX's suite on
# the cuda device (pytest-xdist over the remaining cores; every case its own nvcc call).
if ! skip tests; then
  log "--- cuda tests: pytest -m cuda tests/cuda ($((SECONDS - START)) s)"
  SEL=(-m cuda); skip family && SEL=(-m cuda -k "not every_family_case")
  timeout 300 "$PY" -m pytest -p no:cacheprovider "${SEL[@]}" tests/cuda -v -rfEs --durations=10 \
    > "$OUT/cuda_tests.txt" 2>&1 &
  TESTS=$!
fi
if ! skip onnx-models; then
  log "--- onnx model tests on cuda ($((SECONDS - START)) s)"
  timeout 200 "$PY" -m pytest -p no:cacheprovider tests/onnx/test_backend_suite.py $XDIST -v \
    -k "_cuda and not OnnxBackendNodeModelTest" > "$OUT/onnx_models.txt" 2>&1
  log "onnx models rc $?"; tail -12 "$OUT/onnx_models.txt" >> "$OUT/report.txt"
fi
if ! skip onnx-node; then
  left=$((${GPU_CHECK_BUDGET:-480} - (SECONDS - START)))
  if [ "$left" -gt 60 ]; then
    log "--- onnx node tests on cuda, ${left} s at most ($((SECONDS - START)) s)"
    timeout "$left" "$PY" -m pytest -p no:cacheprovider tests/onnx/test_backend_suite.py $XDIST \
      -v -k "_cuda and OnnxBackendNodeModelTest" > "$OUT/onnx_node.txt" 2>&1
    log "onnx node rc $?"; tail -12 "$OUT/onnx_node.txt" >> "$OUT/report.txt"
  else log "onnx node tests left out: ${left} s left"; fi
fi
if [ -n "${TESTS:-}" ]; then
  wait "$TESTS"; log "cuda tests rc $?"; tail -40 "$OUT/cuda_tests.txt" >> "$OUT/report.txt"
fi
rm -rf "$CACHE"
log "done in $((SECONDS - START)) s"
