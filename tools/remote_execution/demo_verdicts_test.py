"""The demo names a failing test as a test failure, apart from remote execution,
and refuses with a clear message a test that asks for a GPU no worker declares.

Runs the demo's first two builds (demo.Demo: clean, then fully from the remote
action cache) on a real cluster of two workers with nested Bazel, on two
fixtures: a cc_test that passes and an sh_test that fails on purpose. The
failing test's action is never cached (BuildGrid does not cache failures), so
it runs again in the second build; the demo must still find every action that
succeeded to be a remote cache hit, and name the failing test, in both builds,
as the one thing that failed.
"""

import contextlib
import os
import shutil
import tempfile
from pathlib import Path

import demo as demo_module
from execution_log import read_execution_log
from gpu_routing import GPU_PROBE
from verdicts import BUILD, GPU_ROUTING, REMOTE_EXECUTION, count_cache_hits

PASSING = "//tools/remote_execution:demo_fixture_passing_test"
FAILING = "//tools/remote_execution:demo_fixture_failing_test"


@contextlib.contextmanager
def demo_in_scratch(targets):
    """A demo of `targets` on this checkout, with its own scratch HOME and TMPDIR;
    its cluster and state are gone when the block ends."""
    checkout = Path(os.path.realpath("tools/remote_execution/demo_fixture_failing_test.sh")).parents[2]
    scratch = Path(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR", "/tmp")))
    scratch.chmod(0o755)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch),
        "LANG": "C.UTF-8",
        "TMPDIR": str(scratch),
    }
    demo = demo_module.Demo(checkout, targets, scratch, workers=2, env=env)
    try:
        yield demo, scratch
    finally:
        demo.shutdown()
        shutil.rmtree(demo.state, ignore_errors=True)


def demo_output(capsys):
    """What the demo printed, copied into the test's log too."""
    out = capsys.readouterr().out
    with capsys.disabled():
        print(out)
    return out


def test_a_failing_test_is_named_as_a_test_failure_not_a_cache_failure(capsys):
    with demo_in_scratch([PASSING, FAILING]) as (demo, scratch):
        with demo.cluster:
            demo.first()
            demo.second()
        demo.shutdown()
        status = demo.report()
    out = demo_output(capsys)

    assert status == 1, out
    assert dict(demo.verdicts.failed_tests) == {FAILING: ["FAILED in build 1", "FAILED in build 2"]}, out
    # Remote execution held: compiles, links and tests ran remotely, the
    # second build's succeeded actions were all cache hits, workers alive.
    assert demo.verdicts.failures(REMOTE_EXECUTION) == [], out
    assert demo.verdicts.failures(BUILD) == [], out

    # The second build really did re-run the failed test remotely: counted
    # naively over every cacheable action, it would have read as a cache miss.
    second = read_execution_log(scratch / "second.exec.json")
    cache = count_cache_hits(second)
    assert cache.failed == [FAILING], cache
    assert cache.held, cache
    naive = [s for s in second if s.get("remotable") and s.get("remoteCacheable")]
    assert len(naive) == cache.counted + 1, (len(naive), cache)

    assert f"tests: 1 test(s) FAILED: {FAILING} (FAILED in build 1, FAILED in build 2)" in out
    assert "remote execution: all " in out and " checks held" in out
    assert f"{cache.hits} of {cache.counted} remotely cacheable actions that succeeded were remote cache hits" in out
    assert f"remote execution held all its checks; test failures: {FAILING}" in out


def test_a_gpu_test_with_no_worker_declaring_a_gpu_stops_the_demo_with_a_clear_message(capsys):
    """Without the check, BuildGrid would keep the probe queued and the build would never end."""
    with demo_in_scratch([PASSING, GPU_PROBE]) as (demo, scratch):
        status = demo.run()
    out = demo_output(capsys)

    assert status == 1, out
    assert not (scratch / "first.log").exists(), "a build ran"
    [message] = demo.verdicts.failures(GPU_ROUTING)
    assert message.startswith(f"no build: {GPU_PROBE} asks for gpu=cuda, and no worker (")
    assert "declares it, so BuildGrid would queue it until one joins" in message
    assert "remote execution demo FAILED: remote execution not checked; GPU routing failed" in out
    assert demo.verdicts.failures(REMOTE_EXECUTION) == []
