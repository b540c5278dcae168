#!/usr/bin/env bash
# The CUDA rows of the bench, one command on a machine with an NVIDIA GPU:
#
#   tools/bench/cuda_bench.sh [OUT_DIR]
#
# Runs rows cuda-launch (an empty kernel: modrt against CuPy's RawKernel and
# the C floor floors/cuda_launch.c, a cuLaunchKernel loop) and cuda-h2d /
# cuda-d2h (256 MiB copies against CuPy), by the bench's method (fresh
# processes, 3 repeats), and writes OUT_DIR/BENCHMARKS.md (default
# tools/bench/cuda-results). modrt comes from the stage of tools/gpu/cuda_e2e.sh
# (portable DSOs, NVRTC), which is built first where tools/bazel works; on a
# GPU machine that cannot build, run `tools/gpu/cuda_e2e.sh --stage-only` on
# the build machine and copy tools/gpu/stage over. Needs python3 (3.9+),
# numpy and a C compiler ($CC, default cc); CuPy is compared where it imports
# (its lines say "unavailable" otherwise). Without a GPU every row is "not run
# here", with the reason.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
workspace="$(cd "${here}/../.." && pwd -P)"
stage="${workspace}/tools/gpu/stage"
out="${1:-${here}/cuda-results}"
python="${PYTHON:-python3}"

if [[ ! -f "${stage}/MANIFEST" ]]; then
  "${workspace}/tools/gpu/cuda_e2e.sh" --stage-only
fi
# shellcheck source=tools/gpu/gpu_common.sh
source "${workspace}/tools/gpu/gpu_common.sh"
site="$(stage_site "${stage}" "${python}")"
main="${stage}/_main"
args=(--modrt-path "${main}/python" --modrt-path "${site}")
for hook in "${main}"/backends/*/python; do args+=(--modrt-path "${hook}"); done
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
exec "${python}" "${here}/bench.py" cuda --python "${python}" --no-install --out "${out}" "${args[@]}"
