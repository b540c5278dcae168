#!/usr/bin/env bash
# Shows a second clean build fetching from a remote cache instead of
# compiling. It serves an empty cache with nginx on a free loopback port
# (serve.sh), builds TARGETS in a fresh output base with the disk cache off
# (the toolchain root sets --disk_cache for every checkout), runs
# `bazel clean`, builds again, and prints Bazel's own summary of the second
# build ("N processes: M remote cache hit, ..."). Fails if the second build
# ran anything but cache hits and Bazel's internal actions.
#
#   tools/bazel run //tools/remote_cache:demo [-- TARGET...]
#   tools/remote_cache/demo.sh WORKSPACE [TARGET...]    (inside the toolchain root)
#
# The builds use the workspace's --config=remote-cache, aimed at this cache.
set -euo pipefail

# serve.sh lies beside this script, or in its runfiles under `bazel run`.
serve="$(dirname "${BASH_SOURCE[0]}")/serve.sh"
[[ -x "${serve}" ]] || serve="${BASH_SOURCE[0]}.runfiles/_main/tools/remote_cache/serve.sh"
if [[ -n "${BUILD_WORKSPACE_DIRECTORY:-}" ]]; then
  workspace="${BUILD_WORKSPACE_DIRECTORY}"
else
  [[ $# -ge 1 ]] || { echo "usage: $0 WORKSPACE [TARGET...]" >&2; exit 2; }
  workspace="$1"
  shift
fi
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(//core:libmodrt_runtime.so)

scratch="$(mktemp -d "${TMPDIR:-/tmp}/modrt-remote-cache.XXXXXX")"
bazel=(bazel "--output_base=${scratch}/output_base" --max_idle_secs=60)
nginx_pid=""
cleanup() {
  (cd "${workspace}" && "${bazel[@]}" shutdown 2>/dev/null) || true
  if [[ -n "${nginx_pid}" ]]; then
    kill "${nginx_pid}" 2>/dev/null || true
    wait "${nginx_pid}" 2>/dev/null || true
  fi
  rm -rf "${scratch}"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"${serve}" "${scratch}/server" "${port}" 2>"${scratch}/serve.log" &
nginx_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null && break
  kill -0 "${nginx_pid}" 2>/dev/null || { cat "${scratch}/serve.log" "${scratch}/server/nginx/error.log" >&2; exit 1; }
  sleep 0.1
done

# Convenience links go to the scratch directory: `bazel clean` deletes the
# links of its prefix, and with the default one those are the workspace's.
links="--symlink_prefix=${scratch}/bazel-"
flags=(--config=remote-cache "--remote_cache=http://127.0.0.1:${port}" --disk_cache= "${links}" --color=no --curses=no)
cd "${workspace}"

# Bazel's summary of the processes a build ran: "INFO: 14 processes: 10 remote cache hit, 4 internal."
summary() { grep -E '^INFO: [0-9]+ process(es)?: ' "$1" | tail -1 || true; }

build() {
  local log="$1"
  if ! "${bazel[@]}" build "${flags[@]}" "${targets[@]}" >"${log}" 2>&1; then
    cat "${log}" >&2
    echo "demo.sh: the build failed" >&2
    exit 1
  fi
}

echo "== first build, fresh output base, empty cache: ${targets[*]}"
build "${scratch}/first.log"
summary "${scratch}/first.log"
stored="$(find "${scratch}/server/cache" -type f | wc -l)"
echo "   the cache now holds ${stored} entries (action results and outputs)"

"${bazel[@]}" clean "${links}" >/dev/null 2>&1
echo "== second build after bazel clean"
build "${scratch}/second.log"
second="$(summary "${scratch}/second.log")"
echo "${second}"

hits="$(grep -oE '[0-9]+ remote cache hit' <<<"${second}" | grep -oE '^[0-9]+' || echo 0)"
# What is left once cache hits and Bazel's internal bookkeeping are taken out ran for real.
ran="$(sed -E 's/^INFO: [0-9]+ process(es)?: //; s/[0-9]+ remote cache hit//; s/[0-9]+ internal//; s/[ ,.]//g' <<<"${second}")"
echo "remote cache hits in the second build: ${hits}"
if [[ "${hits}" -eq 0 || -n "${ran}" ]]; then
  echo "demo.sh: the second build did not come from the cache alone" >&2
  exit 1
fi
