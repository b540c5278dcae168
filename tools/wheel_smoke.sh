#!/usr/bin/env bash
# The wheels on the host's own python3, outside the toolchain root: what a
# user gets from `pip install`. .ci/run runs it after `tools/bazel build
# //python:wheels`.
#
#   tools/wheel_smoke.sh [--wheels DIR] [--junitxml FILE] [--python PYTHON]
#
# 1. installs the host's OpenCL and Vulkan CPU drivers (pocl-opencl-icd with
#    the ICD loader ocl-icd-libopencl1, mesa-vulkan-drivers) and glslang-tools (GLSL to SPIR-V for the Vulkan
#    check) with apt-get where they are missing (needs root, as CI has);
# 2. makes a venv with the host interpreter; numpy, absl-py and pytest come
#    from PyPI (through a TLS proxy: the host's CA bundle), or offline from
#    PIP_FIND_LINKS / a local index with --no-index;
# 3. installs modrt and every backend wheel from DIR with --no-index, then
#    modrt[tinygrad] (modrt-tinygrad from DIR, tinygrad from PyPI);
# 4. runs tools/wheel_smoke_test.py with the venv's python: `modrt demo`,
#    OpenCL and Vulkan results against numpy, CUDA and ROCm saying why they
#    have no device, tinygrad's DEV=MODRT:opencl. Results go to FILE (JUnit
#    XML, counted by .ci/run).
#
# Exit status: 0 if every step and test passed.
set -uo pipefail

workspace="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)"
wheels="${workspace}/bazel-bin/python/wheels"
junit=""
python="python3"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --wheels) wheels="$2"; shift 2 ;;
    --junitxml) junit="$2"; shift 2 ;;
    --python) python="$2"; shift 2 ;;
    *) echo "usage: $0 [--wheels DIR] [--junitxml FILE] [--python PYTHON]" >&2; exit 2 ;;
  esac
done

say() { printf 'wheel_smoke: %s\n' "$*" >&2; }
fail() {
  say "FAILED: $*"
  exit 1
}

shopt -s nullglob
found=("${wheels}"/*.whl)
[[ ${#found[@]} -gt 0 ]] || fail "no wheels in ${wheels} (run: tools/bazel build //python:wheels)"
say "host python: $(${python} -c 'import sys, platform; print(sys.version.split()[0], platform.libc_ver())')"

# 1. Drivers (and glslang), only where missing.
missing=()
for pkg in pocl-opencl-icd ocl-icd-libopencl1 mesa-vulkan-drivers glslang-tools; do
  dpkg-query -W -f='${Status}' "${pkg}" 2>/dev/null | grep -q "install ok installed" || missing+=("${pkg}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  command -v apt-get >/dev/null || fail "${missing[*]} missing and no apt-get here"
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null 2>&1 || say "apt-get update failed; trying the install anyway"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
    fail "apt-get install ${missing[*]}"
fi

# 2. A venv of the host interpreter, with modrt's dependencies and pytest.
tmp="$(mktemp -d)"
trap 'rm -rf "${tmp}"' EXIT
venv="${tmp}/venv"
"${python}" -m venv "${venv}" || fail "${python} -m venv"
pip=("${venv}/bin/python" -m pip --disable-pip-version-check --quiet)
cert="/etc/ssl/certs/ca-certificates.crt"
[[ -f "${cert}" ]] && export PIP_CERT="${PIP_CERT:-${cert}}"
if ! "${pip[@]}" install numpy absl-py pytest; then
  say "PyPI not reachable; installing numpy, absl-py and pytest with --no-index (PIP_FIND_LINKS=${PIP_FIND_LINKS:-})"
  "${pip[@]}" install --no-index numpy absl-py pytest || fail "numpy, absl-py and pytest are neither on PyPI nor local"
fi

# 3. The wheels, offline. --no-deps: each is named, and modrt-cuda's CUDA header
# wheels (from PyPI for a user) are not needed by these smoke tests.
"${pip[@]}" install --no-index --no-deps --find-links "${wheels}" modrt modrt-opencl modrt-vulkan modrt-cuda \
  modrt-rocm modrt-hexagon || fail "pip install --no-index the wheels in ${wheels}"
# The tinygrad extra: modrt-tinygrad from DIR, tinygrad itself from PyPI.
"${pip[@]}" install --find-links "${wheels}" "modrt[tinygrad]" || fail "pip install modrt[tinygrad]"
# The ray extra: Ray (pinned by modrt's metadata) from PyPI, for modrt.distributed.
"${pip[@]}" install --find-links "${wheels}" "modrt[ray]" || fail "pip install modrt[ray]"
"${venv}/bin/python" -m pip list 2>/dev/null | grep -E '^(modrt|tinygrad|ray)' >&2

# 4. The smoke tests, from outside the checkout so that only the venv's modrt is importable.
junit_arg=()
[[ -n "${junit}" ]] && junit_arg=("--junitxml=${junit}")
# readme_installs_test.py runs every install block of the README as written,
# each in a venv of its own (it needs PyPI for the CUDA wheels).
cp "${workspace}/tools/wheel_smoke_test.py" "${workspace}/tools/readme_installs_test.py" "${tmp}/"
(cd "${tmp}" && env -u PYTHONPATH MODRT_WORKSPACE="${workspace}" "${venv}/bin/python" -m pytest -p no:cacheprovider \
  -q -rs "${junit_arg[@]}" wheel_smoke_test.py readme_installs_test.py)
