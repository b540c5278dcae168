#!/usr/bin/env bash
# tools/gpu/wheel_session.sh OUT: everything a lent GPU machine is used for,
# in one command, from the wheel stage (tools/gpu/cuda_wheels.sh --stage-only,
# copied along): the CUDA end-to-end tests from a venv of the wheels, then,
# from the machine's own python3 (which has PyTorch and CuPy) with the modrt
# wheels installed beside it, the DLPack round trips, the CUDA benchmark
# rows (modrt vs CuPy vs a bare cuLaunchKernel loop), and tinygrad on
# MODRT:cuda (tinygrad's own test_tiny.py, then modrt's op sweep). Logs and
# the benchmark report go to OUT; the exit status is the number of steps
# that failed.
set -uo pipefail
cd "$(dirname "$0")/../.."

out="${1:?usage: tools/gpu/wheel_session.sh OUT}"
mkdir -p "${out}"
stage=tools/gpu/wheel_stage
failed=0
step() {
  local name="$1"
  shift
  echo "=== ${name}: $*"
  local start=${SECONDS}
  "$@" >"${out}/${name}.log" 2>&1
  local rc=$?
  tail -n 40 "${out}/${name}.log"
  echo "=== ${name}: exit ${rc} in $((SECONDS - start)) s"
  [[ ${rc} -eq 0 ]] || failed=$((failed + 1))
}

{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv
  python3 --version
  python3 -c 'import torch, cupy; print("torch", torch.__version__, "cupy", cupy.__version__)'
} >"${out}/machine.txt" 2>&1
cat "${out}/machine.txt"

step e2e tools/gpu/cuda_wheels.sh --run-only

# The same wheels, without dependencies, beside the machine's PyTorch/CuPy.
site=/tmp/modrt-wheel-site
rm -rf "${site}"
python3 -m pip install --quiet --no-index --no-deps --target "${site}" "${stage}"/wheels/modrt-*.whl \
  "${stage}"/wheels/modrt_cuda-*.whl || failed=$((failed + 1))
# The NVRTC the e2e step unpacked from the stage.
export MODRT_NVRTC_LIBRARY
MODRT_NVRTC_LIBRARY="$(ls /tmp/modrt-cuda-wheels-venv/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12)"
step dlpack env PYTHONPATH="${site}" python3 -m pytest -p no:cacheprovider -v -rs tools/gpu/dlpack_gpu_test.py

# tinygrad on MODRT:cuda: the pinned tinygrad and modrt-tinygrad (which puts
# tinygrad/runtime/ops_modrt.py into tinygrad's package, so DEV=MODRT:cuda
# needs no other step) with the CUDA header wheels (cuda_fp16.h for half).
tinygrad_site=/tmp/modrt-tinygrad-site
rm -rf "${tinygrad_site}"
python3 -m pip install --quiet --no-index --no-deps --target "${tinygrad_site}" "${stage}"/wheels/modrt-*.whl \
  "${stage}"/wheels/modrt_cuda-*.whl "${stage}"/wheels/modrt_tinygrad-*.whl "${stage}"/wheels/tinygrad-*.whl \
  "${stage}"/wheels/nvidia_cuda_runtime_cu12-*.whl "${stage}"/wheels/nvidia_cuda_cccl_cu12-*.whl ||
  failed=$((failed + 1))
step tinygrad-tiny env PYTHONPATH="${tinygrad_site}" DEV=MODRT:cuda timeout 300 python3 -m pytest -p no:cacheprovider \
  -v -rs "${stage}/tinygrad/test_tiny.py"
step tinygrad-ops env PYTHONPATH="${tinygrad_site}" MODRT_TINYGRAD_DEVICE=MODRT:cuda timeout 300 python3 -m pytest \
  -p no:cacheprovider -v -rs "${stage}/tests/tinygrad/ops_test.py"
# Last: the longest step.
step bench env PYTHONPATH="${site}" python3 tools/bench/bench.py cuda --python python3 --modrt-path "${site}" \
  --no-install --out "${out}/bench"
echo "wheel_session: ${failed} step(s) failed"
exit "${failed}"
