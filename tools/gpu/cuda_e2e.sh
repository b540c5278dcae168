#!/usr/bin/env bash
# The CUDA end-to-end tests on a real NVIDIA GPU: vector add, shared-memory
# reduction (48 KiB and opted-in 64 KiB), modules cross-compiled in another
# process (PTX, and CUDA source compiled by NVRTC on load) loaded from bytes,
# and real compilers' kernels as emitted (tinygrad's and TVM's, with
# cuda_fp16.h and <cuda/std/...> from the staged header wheels) against numpy.
#
#   tools/gpu/cuda_e2e.sh                 stage if needed (needs tools/bazel), then run
#   tools/gpu/cuda_e2e.sh --stage-only    stage only, e.g. on the build machine
#   tools/gpu/cuda_e2e.sh --stage-only --compress
#                                         ... with NVRTC as .xz (fits a 64 MiB copy)
#   tools/gpu/cuda_e2e.sh --run-only      run from an existing stage
#   tools/gpu/cuda_e2e.sh --run-only --dlpack
#                                         run the DLPack round trips with PyTorch
#                                         and CuPy CUDA tensors instead (docs/GPU.md)
#   tools/gpu/cuda_e2e.sh --rehearse      run the staged driver-test-double tests
#                                         instead: checks the stage on a machine
#                                         without a GPU (e.g. an older distribution)
#
# The stage (tools/gpu/stage/) is built with --config=portable: its DSOs load on
# glibc 2.28 and later and carry their own libstdc++, so a GPU machine that
# cannot provision the Debian root (no network, older distribution) needs only
# its NVIDIA driver, python3 (3.9+) and numpy. pytest and NVRTC come staged;
# a system NVRTC (CUDA toolkit) is preferred when present, since its PTX
# matches the driver's age. Set MODRT_NVRTC_LIBRARY to choose one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
workspace="$(cd "${here}/../.." && pwd -P)"
stage="${here}/stage"
mode=all
compress=()
gpu_test=backends/cuda/gpu_test.py
for arg in "$@"; do
  case "${arg}" in
    --stage-only) mode=stage ;;
    --run-only) mode=run ;;
    --rehearse) mode=rehearse ;;
    --compress) compress=(--compress) ;;
    --dlpack) gpu_test=tools/gpu/dlpack_gpu_test.py ;;
    -h | --help)
      sed -n '2,25p' "$0"
      exit 0
      ;;
    *)
      echo "cuda_e2e.sh: unknown argument ${arg} (see --help)" >&2
      exit 2
      ;;
  esac
done

say() { printf 'cuda_e2e: %s\n' "$*" >&2; }
# shellcheck source=tools/gpu/gpu_common.sh
source "${here}/gpu_common.sh"

do_stage() {
  say "building portable DSOs and staging them into ${stage}"
  (cd "${workspace}" && tools/bazel run --config=portable --//backends:cuda=on //tools/gpu:stage -- \
    "${stage}" ${compress[@]+"${compress[@]}"})
}

# Runs pytest on the staged test file $1 with the staged tree importable.
do_run() {
  local test_file="$1"
  [[ -f "${stage}/MANIFEST" ]] || {
    say "no stage at ${stage}: run tools/gpu/cuda_e2e.sh --stage-only where tools/bazel works, and copy tools/gpu/stage here"
    exit 1
  }
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true
  else
    say "nvidia-smi not found; the tests will report whether libcuda.so.1 loads"
  fi
  local python="${PYTHON:-python3}"
  "${python}" - <<'EOF'
import sys
if sys.version_info < (3, 9):
    sys.exit(f"cuda_e2e: Python 3.9+ is needed, this is {sys.version.split()[0]}")
try:
    import numpy  # noqa: F401
except ImportError:
    sys.exit("cuda_e2e: numpy is needed on this machine (pip install numpy)")
EOF
  # A compressed NVRTC is unpacked outside the stage, which stays small.
  local site
  site="$(stage_site "${stage}" "${python}")"
  local main="${stage}/_main"
  local paths=("${main}/python" "${main}/tests" "${main}/tests/corpus")
  for hook in "${main}"/backends/*/python; do paths+=("${hook}"); done
  if ! "${python}" -c "import pytest" 2>/dev/null; then
    paths+=("${stage}/pytest")
  fi
  # The staged NVRTC is found on sys.path; a toolkit's own NVRTC wins.
  prefer_toolkit_nvrtc
  paths+=("${site}")
  say "NVRTC: ${MODRT_NVRTC_LIBRARY:-staged ($(grep '^NVRTC' "${stage}/MANIFEST"))}"
  cd "${main}"
  PYTHONPATH="$(IFS=:; echo "${paths[*]}")${PYTHONPATH:+:${PYTHONPATH}}" \
    exec "${python}" -m pytest -p no:cacheprovider -v -rs "${test_file}"
}

case "${mode}" in
  stage) do_stage ;;
  run) do_run "${gpu_test}" ;;
  rehearse)
    export MODRT_CUDA_DRIVER_LIBRARY="${stage}/_main/backends/cuda/libcuda_test_double.so"
    do_run backends/cuda/driver_test_double_test.py
    ;;
  all)
    [[ -f "${stage}/MANIFEST" ]] || do_stage
    do_run "${gpu_test}"
    ;;
esac
