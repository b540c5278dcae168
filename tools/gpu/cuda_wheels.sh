#!/usr/bin/env bash
# The CUDA end-to-end tests (backends/cuda/gpu_test.py: vector add,
# shared-memory reduction, modules cross-compiled in another process and
# loaded from bytes) from the wheels, on a GPU machine: no toolchain root, no
# network, any Python >= 3.10 (3.12 on the GPU machines this project uses).
#
#   tools/gpu/cuda_wheels.sh --stage-only   here (needs tools/bazel and PyPI): builds
#                                           //python:wheels and fills tools/gpu/wheel_stage/
#   tools/gpu/cuda_wheels.sh --run-only     there: installs the staged wheels into a venv
#                                           and runs the tests from it
#   tools/gpu/cuda_wheels.sh --rehearse     like --run-only on a machine without a GPU:
#                                           checks the install, that the CUDA runtime loads
#                                           from modrt-cuda and that the staged NVRTC
#                                           compiles to PTX, and that the device says why
#                                           it is missing
#   tools/gpu/cuda_wheels.sh                stage if needed, then run
#
# Options: --stage DIR (default tools/gpu/wheel_stage), --python PYTHON (run
# side, default python3). The stage holds the modrt, modrt-cuda and
# modrt-tinygrad wheels, absl-py, the pinned tinygrad wheel (pure Python) and
# tinygrad's test_tiny.py from its sdist, the CUDA header wheels, NVRTC
# (libnvrtc.so.12 and its builtins, xz-compressed), the test files and a
# MANIFEST; it must stay under the 64 MiB a GPU machine's copy takes, so
# numpy and pytest are not staged: the venv sees the run side's own
# (--system-site-packages), and the run side needs both installed. A
# toolkit's own NVRTC on the GPU machine is preferred (its PTX matches the
# driver's age); MODRT_NVRTC_LIBRARY picks one.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
workspace="$(cd "${here}/../.." && pwd -P)"
stage="${here}/wheel_stage"
python="${PYTHON:-python3}"
mode=all
while [[ $# -gt 0 ]]; do
  case "$1" in
    --stage-only) mode=stage; shift ;;
    --run-only) mode=run; shift ;;
    --rehearse) mode=rehearse; shift ;;
    --stage) stage="$(mkdir -p "$2" && cd "$2" && pwd -P)"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    -h | --help) sed -n '2,25p' "$0"; exit 0 ;;
    *) echo "cuda_wheels.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

say() { printf 'cuda_wheels: %s\n' "$*" >&2; }
# shellcheck source=tools/gpu/gpu_common.sh
source "${here}/gpu_common.sh"
die() {
  say "error: $*"
  exit 1
}

do_stage() {
  local nvrtc_pin
  nvrtc_pin="$(grep -E '^nvidia-cuda-nvrtc-cu12==' "${workspace}/tools/toolchain/pip-requirements.txt")" ||
    die "no NVRTC pin in tools/toolchain/pip-requirements.txt"
  say "building the wheels (tools/bazel build //python:wheels)"
  (cd "${workspace}" && tools/bazel build //python:wheels) || die "tools/bazel build //python:wheels"
  rm -rf "${stage}"
  mkdir -p "${stage}/wheels" "${stage}/nvrtc" "${stage}/tests/tinygrad" "${stage}/tinygrad"
  local built="${workspace}/bazel-bin/python/wheels"
  cp -L "${built}"/modrt-*.whl "${built}"/modrt_cuda-*.whl "${built}"/modrt_tinygrad-*.whl "${stage}/wheels/"
  local cert=/etc/ssl/certs/ca-certificates.crt
  [[ -f "${cert}" ]] && export PIP_CERT="${PIP_CERT:-${cert}}"
  # modrt's absl-py (pure Python); numpy and pytest are the run side's own.
  say "downloading absl-py"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "${stage}/wheels" absl-py || die "pip download absl-py"
  # MODRT:cuda: tinygrad (pure Python, the version modrt_tinygrad is tested
  # against), its own test_tiny.py and modrt's op sweep (wheel_session.sh).
  local tinygrad_version
  tinygrad_version="$(sed -n 's/^TINYGRAD_VERSION = "\(.*\)"$/\1/p' "${workspace}/python/modrt_tinygrad/__init__.py")"
  [[ -n "${tinygrad_version}" ]] || die "no TINYGRAD_VERSION in python/modrt_tinygrad/__init__.py"
  say "downloading tinygrad==${tinygrad_version} and its test_tiny.py (sdist)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "${stage}/wheels" "tinygrad==${tinygrad_version}" || die "pip download tinygrad==${tinygrad_version}"
  local sdist test_tiny
  sdist="$(mktemp -d)"
  test_tiny="$("${workspace}/tools/tinygrad_tests.sh" "${sdist}")" || die "tools/tinygrad_tests.sh"
  cp "${test_tiny}" "${stage}/tinygrad/"
  rm -rf "${sdist}"
  cp "${workspace}"/tests/tinygrad/{ops_test.py,tinygrad_testing.py} "${stage}/tests/tinygrad/"
  say "downloading ${nvrtc_pin} and keeping libnvrtc, xz-compressed"
  local tmp
  tmp="$(mktemp -d)"
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 -d "${tmp}" "${nvrtc_pin}" || die "pip download ${nvrtc_pin}"
  python3 - "${tmp}"/nvidia_cuda_nvrtc_cu12-*.whl "${stage}/nvrtc" <<'EOF'
import lzma, re, sys, zipfile
from pathlib import Path
wheel, out = sys.argv[1], Path(sys.argv[2])
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        base = name.rsplit("/", 1)[-1]
        if re.fullmatch(r"libnvrtc(-builtins)?\.so\.[0-9.]+", base):
            (out / (base + ".xz")).write_bytes(lzma.compress(z.read(name), preset=1))
EOF
  rm -rf "${tmp}"
  # modrt-cuda's dependencies: the CUDA headers NVRTC compiles real compilers' kernels with.
  local header_pins
  header_pins="$(grep -E '^nvidia-cuda-(runtime|cccl)-cu12==' "${workspace}/tools/toolchain/pip-requirements.txt")" ||
    die "no CUDA header wheel pins in tools/toolchain/pip-requirements.txt"
  say "downloading the CUDA header wheels: $(echo ${header_pins})"
  # shellcheck disable=SC2086 # one pin a word
  python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    --platform manylinux2014_x86_64 -d "${stage}/wheels" ${header_pins} || die "pip download ${header_pins}"
  cp "${workspace}"/backends/cuda/{gpu_test.py,cuda_testing.py} "${workspace}/tests/modrt_testing.py" "${stage}/tests/"
  # The corpus's CUDA kernels and its runner, which gpu_test.py finds beside it.
  mkdir -p "${stage}/tests/corpus"
  cp "${workspace}"/tests/corpus/{cases.py,corpus_run.py} "${stage}/tests/corpus/"
  (cd "${workspace}/tests/corpus" && find . -path './*/*/cuda/*' -type f -exec cp --parents {} "${stage}/tests/corpus/" \;)
  {
    echo "staged $(date -u +%FT%TZ) from $(cd "${workspace}" && git rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "${nvrtc_pin}"
    (cd "${stage}" && find . -type f -printf '%s %p\n' | sort -k2)
  } >"${stage}/MANIFEST"
  say "stage: ${stage} ($(du -sh "${stage}" | cut -f1)); copy it to the GPU machine and run --run-only there"
}

# Makes ${python}'s site directories visible in venv $1 (a .pth file).
see_callers_packages() {
  local site
  site="$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  "${python}" -c 'import site; print("\n".join(site.getsitepackages()))' >"${site}/modrt-run-side.pth"
}

# Installs the stage into a venv of ${python}; prints the venv's python.
install() {
  [[ -f "${stage}/MANIFEST" ]] || die "no stage at ${stage}: run --stage-only where tools/bazel works, and copy it here"
  "${python}" -c 'import sys; sys.exit(sys.version_info < (3, 10))' ||
    die "$("${python}" --version 2>&1): modrt's wheel needs CPython >= 3.10"
  local venv="${TMPDIR:-/tmp}/modrt-cuda-wheels-venv"
  rm -rf "${venv}"
  "${python}" -c 'import numpy, pytest' 2>/dev/null ||
    die "$("${python}" --version 2>&1) has no numpy or no pytest: the stage carries neither (64 MiB); pip install numpy pytest"
  local args=(install --quiet --disable-pip-version-check --no-index --find-links "${stage}/wheels"
    modrt modrt-cuda)
  # numpy and pytest: the run side's own, seen through --system-site-packages,
  # and through a .pth naming ${python}'s own site directories when ${python}
  # is itself a venv's (the GPU machines' python3 is /opt/torch/.venv's; a
  # venv made from it sees only the base interpreter's packages).
  if "${python}" -m venv --system-site-packages "${venv}" >&2 2>/dev/null &&
    "${venv}/bin/python" -m pip --version >/dev/null 2>&1; then
    see_callers_packages "${venv}"
    "${venv}/bin/python" -m pip "${args[@]}" >&2 || die "pip install from ${stage}/wheels"
  else
    # No ensurepip (Debian without python3-venv): a venv without pip, filled by the system pip.
    rm -rf "${venv}"
    "${python}" -m venv --system-site-packages --without-pip "${venv}" || die "${python} -m venv"
    see_callers_packages "${venv}"
    "${python}" -m pip --python "${venv}/bin/python" "${args[@]}" >&2 ||
      die "neither the venv nor ${python} has a pip that can install the wheels"
  fi
  local site
  site="$("${venv}/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  prefer_toolkit_nvrtc
  if [[ -z "${MODRT_NVRTC_LIBRARY:-}" ]]; then
    # Where the nvidia-cuda-nvrtc-cu12 wheel puts it: modrt finds it on sys.path.
    "${venv}/bin/python" - "${stage}/nvrtc" "${site}/nvidia/cuda_nvrtc/lib" <<'EOF'
import lzma, sys
from pathlib import Path
src, dest = Path(sys.argv[1]), Path(sys.argv[2])
dest.mkdir(parents=True, exist_ok=True)
for packed in src.glob("*.xz"):
    (dest / packed.stem).write_bytes(lzma.decompress(packed.read_bytes()))
EOF
  fi
  say "NVRTC: ${MODRT_NVRTC_LIBRARY:-staged ($(sed -n 2p "${stage}/MANIFEST"))}"
  echo "${venv}/bin/python"
}

# What the tests run from: the wheels, not a checkout.
describe() {
  "$1" - <<'EOF'
import sys
import modrt
s = modrt.backend.runtime_status("cuda")
print(f"cuda_wheels: Python {sys.version.split()[0]}, modrt {modrt.__version__} from {modrt.__file__}", file=sys.stderr)
print(f"cuda_wheels: CUDA runtime loaded={s.loaded} from {s.origin}: {s.path}", file=sys.stderr)
sys.exit(0 if s.loaded and s.origin.startswith("wheel modrt-cuda") else 1)
EOF
}

do_run() {
  if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true
  else
    say "nvidia-smi not found; the tests will report whether libcuda.so.1 loads"
  fi
  local vpython
  vpython="$(install)"
  describe "${vpython}" || die "the CUDA runtime did not load from the modrt-cuda wheel"
  cd "${stage}/tests"
  exec env -u PYTHONPATH "${vpython}" -m pytest -p no:cacheprovider -v -rs gpu_test.py
}

do_rehearse() {
  local vpython
  vpython="$(install)"
  describe "${vpython}" || die "the CUDA runtime did not load from the modrt-cuda wheel"
  cd "${stage}/tests"
  env -u PYTHONPATH "${vpython}" - <<'EOF'
import sys
import modrt
from gpu_test import KERNELS, SIGNATURES
mod = modrt.compile(KERNELS, "cuda", SIGNATURES)
ptx = mod.inspect_source()
assert not mod.is_fallback and ptx.lstrip().startswith("//") and ".entry vadd" in ptx, ptx[:200]
dev = modrt.device("cuda")
assert not dev.exist and "libcuda" in dev.unavailable_reason, dev.unavailable_reason
print(f"cuda_wheels: rehearsal passed: the staged NVRTC compiled {len(ptx)} bytes of PTX; "
      f"no GPU here ({dev.unavailable_reason[:60]}...)", file=sys.stderr)
EOF
  # MODRT:cuda from the staged tinygrad wheels: its CUDA (half: cuda_fp16.h
  # from the staged header wheels) compiles with the staged NVRTC, and the
  # device says why it cannot open.
  "${vpython}" -m pip install --quiet --disable-pip-version-check --no-index --find-links "${stage}/wheels" \
    modrt-tinygrad >&2 || die "pip install modrt-tinygrad from ${stage}/wheels"
  env -u PYTHONPATH "${vpython}" - <<'EOF'
import sys
from modrt_tinygrad.device import ModrtCUDARenderer, compile_kernel
from tinygrad import Device, Tensor, dtypes
from tinygrad.codegen import to_program
from tinygrad.helpers import Target
from tinygrad.uop.ops import Ops
renderer = ModrtCUDARenderer(Target("MODRT:cuda", "CUDA", "sm_90"))
out = (Tensor.empty(64, dtype=dtypes.half, device="NULL") * 3).cast(dtypes.float32).contiguous()
calls = [c for c in out.linear_with_vars()[0].src if c.src[0].op is Ops.SINK]
for call in calls:
    ptx = compile_kernel("cuda", "sm_90", to_program(call.src[0], renderer).to_elf()).inspect_source("ptx")
    assert ".target sm_90" in ptx, ptx[:300]
try:
    Device["MODRT:cuda"]
    sys.exit("cuda_wheels: MODRT:cuda opened on a machine without a GPU")
except RuntimeError as e:
    assert "libcuda" in str(e), e
    print(f"cuda_wheels: rehearsal passed: tinygrad's CUDA for MODRT:cuda compiled ({len(calls)} kernel(s), half); "
          f"the device refuses here: {str(e)[:80]}...", file=sys.stderr)
EOF
}

case "${mode}" in
  stage) do_stage ;;
  run) do_run ;;
  rehearse) do_rehearse ;;
  all)
    [[ -f "${stage}/MANIFEST" ]] || do_stage
    do_run
    ;;
esac
