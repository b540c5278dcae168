# Shell functions shared by the scripts that run on a GPU machine
# (tools/gpu/cuda_e2e.sh, tools/gpu/cuda_wheels.sh, tools/bench/cuda_bench.sh).
# Sourced, not run.

# prefer_toolkit_nvrtc: a CUDA toolkit's own NVRTC on this machine wins over
# the staged one (its PTX matches the driver's age): MODRT_NVRTC_LIBRARY is
# exported to it, unless the caller set MODRT_NVRTC_LIBRARY already.
prefer_toolkit_nvrtc() {
  [[ -z "${MODRT_NVRTC_LIBRARY:-}" ]] || return 0
  local system_nvrtc candidate
  system_nvrtc="$( (ldconfig -p 2>/dev/null | awk '/libnvrtc\.so\.12 /{print $NF; exit}') || true)"
  for candidate in "${system_nvrtc}" /usr/local/cuda/lib64/libnvrtc.so.12; do
    if [[ -n "${candidate}" && -e "${candidate}" ]]; then
      export MODRT_NVRTC_LIBRARY="${candidate}"
      return 0
    fi
  done
}

# stage_site STAGE PYTHON: prints the directory to put on sys.path for the
# portable stage's site/ (tools/gpu/stage.py): site/ itself, or, when it holds
# xz-compressed files (NVRTC, compressed to keep the stage small), a directory
# outside the stage into which PYTHON unpacks them once.
stage_site() {
  local staged="$1/site" python="$2"
  if [[ -z "$(find "${staged}" -name '*.xz' -print -quit)" ]]; then
    echo "${staged}"
    return 0
  fi
  local site="${TMPDIR:-/tmp}/modrt-cuda-e2e-site"
  "${python}" - "${staged}" "${site}" <<'PY'
import lzma, sys
from pathlib import Path
staged, site = Path(sys.argv[1]), Path(sys.argv[2])
for packed in staged.rglob("*.xz"):
    unpacked = site / packed.relative_to(staged).with_suffix("")
    if not unpacked.exists():
        unpacked.parent.mkdir(parents=True, exist_ok=True)
        unpacked.write_bytes(lzma.decompress(packed.read_bytes()))
PY
  echo "${site}"
}
