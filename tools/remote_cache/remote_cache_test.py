"""A second clean build of modrt's core comes from an nginx remote cache
instead of the compiler: tools/remote_cache/demo.sh, run on this checkout."""

import os
import re
import subprocess
from pathlib import Path

DEMO = Path("tools/remote_cache/demo.sh")
SUMMARY = re.compile(r"^INFO: (\d+) process(?:es)?: (.*)\.$", re.M)


def executed(summary: str) -> dict[str, int]:
    """{"remote cache hit": 10, "internal": 4, "processwrapper-sandbox": 9, ...}"""
    return {kind.strip(): int(n) for n, kind in re.findall(r"(\d+) ([^,]+)", summary)}


def test_second_clean_build_is_served_by_the_remote_cache():
    checkout = Path(os.path.realpath(DEMO)).parents[2]
    # The demo's output base goes to Bazel's per-test tmpdir, which Bazel clears.
    scratch = os.environ.get("TEST_TMPDIR", "/tmp")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": scratch, "LANG": "C.UTF-8", "TMPDIR": scratch}
    proc = subprocess.run(
        [str(DEMO), str(checkout), "//core:libmodrt_runtime.so"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=1500,
    )
    log = "\n".join("    | " + line for line in proc.stdout.splitlines()[-60:])
    assert proc.returncode == 0, log
    summaries = SUMMARY.findall(proc.stdout)
    assert len(summaries) == 2, log
    first, second = (executed(s) for _, s in summaries)

    # The cache started empty: the first build compiled and linked for real.
    assert "remote cache hit" not in first, log
    ran_first = sum(n for kind, n in first.items() if kind != "internal")
    assert ran_first > 0, log
    # After `bazel clean`, every one of those came back from the cache.
    assert set(second) <= {"remote cache hit", "internal"}, log
    assert second["remote cache hit"] == ran_first, log
    assert f"remote cache hits in the second build: {ran_first}" in proc.stdout, log
