#!/usr/bin/env bash
# tools/tinygrad_tests.sh DIR: fetches tinygrad's own tests from its pinned
# source distribution (pip download, the version modrt_tinygrad is tested
# against) into DIR and prints the path of test/test_tiny.py. The Bazel build
# is offline, so .ci/run fetches here and hands the file to
# //tests/tinygrad:tiny_*_test (--test_env=MODRT_TINYGRAD_TEST_TINY=...).
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${1:?usage: tools/tinygrad_tests.sh DIR}"
version="$(sed -n 's/^TINYGRAD_VERSION = "\(.*\)"$/\1/p' python/modrt_tinygrad/__init__.py)"
[[ -n "${version}" ]] || { echo "tinygrad_tests.sh: no TINYGRAD_VERSION in python/modrt_tinygrad/__init__.py" >&2; exit 1; }
mkdir -p "${dir}"
python3 -m pip download --quiet --no-deps --no-binary :all: --dest "${dir}" "tinygrad==${version}" >&2
tar -xzf "${dir}/tinygrad-${version}.tar.gz" -C "${dir}" "tinygrad-${version}/test/test_tiny.py"
echo "$(cd "${dir}" && pwd)/tinygrad-${version}/test/test_tiny.py"
