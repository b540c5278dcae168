"""A test whose target carries exec_properties {"test.gpu": "cuda"} runs only on a
worker that declares the platform property gpu=cuda.

The property is DECLARED by the worker (buildbox-worker --platform gpu=cuda),
not detected: no GPU is probed, here or anywhere in the cluster. The test starts
a cluster with one plain worker, asks Bazel (--config=remote-exec) to run
//tools/remote_execution:gpu_property_probe_test, sees the action wait in
BuildGrid's queue while the plain worker is idle, then adds a worker that
declares gpu=cuda and sees the action run there and the build pass.
"""

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import cluster as cl

PROBE = "//tools/remote_execution:gpu_property_probe_test"
QUEUED, COMPLETED = 2, 4  # REAPI ExecutionStage values


def test_gpu_test_waits_for_and_runs_on_a_worker_that_declares_gpu():
    checkout = Path(os.path.realpath("tools/remote_execution/gpu_probe.sh")).parents[2]
    scratch = Path(tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR", "/tmp")))
    scratch.chmod(0o755)
    # The cluster's state must not lie under /tmp (TEST_TMPDIR may, in a nested build).
    state = cl.new_state_dir()
    try:
        _route(checkout, scratch, state)
    finally:
        shutil.rmtree(state, ignore_errors=True)


def _route(checkout: Path, scratch: Path, state: Path) -> None:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(scratch),
        "LANG": "C.UTF-8",
        "TMPDIR": str(scratch),
    }
    bazel = ["bazel", f"--output_base={scratch}/output_base", "--max_idle_secs=30"]
    exec_log = scratch / "exec.json"
    with cl.Cluster(state, workers=1, port=0) as cluster:
        plain = cluster.worker_list[0]
        assert "gpu" not in plain.properties
        since = time.time()
        build = subprocess.Popen(
            [
                *bazel,
                "test",
                "--config=remote-exec",
                f"--remote_executor={cluster.endpoint}",
                "--disk_cache=",
                "--symlink_prefix=/",
                "--color=no",
                "--curses=no",
                "--noremote_accept_cached",
                f"--execution_log_json_file={exec_log}",
                PROBE,
            ],
            cwd=checkout,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            # The probe's action reaches BuildGrid and stays queued: the only worker lacks gpu.
            deadline = time.monotonic() + 600
            queued_since = None
            while queued_since is None or time.monotonic() - queued_since < 10:
                assert build.poll() is None, f"the build ended without a gpu worker:\n{build.stdout.read()}"
                assert time.monotonic() < deadline, "the probe's action never reached BuildGrid"
                jobs = cluster.jobs(since)
                if jobs and queued_since is None:
                    queued_since = time.monotonic()
                if jobs:
                    assert [(w, stage) for _, w, _, stage in jobs] == [("", QUEUED)], jobs
                    assert plain.running_actions() == []
                time.sleep(0.5)

            declared = cluster.start_worker("gpu-declared-not-detected", {"OSFamily": "linux", "gpu": "cuda"})
            output, _ = build.communicate(timeout=600)
        finally:
            if build.poll() is None:
                build.kill()
            subprocess.run([*bazel, "shutdown"], cwd=checkout, env=env, capture_output=True)
        assert build.returncode == 0, output
        jobs = cluster.jobs(since)

    spawns = [json.loads(chunk) for chunk in _split(exec_log.read_text())]
    # The test action itself (Bazel's test-setup.sh running the probe); its XML
    # report is made by a second action that asks for nothing.
    tests = [s for s in spawns if s.get("commandArgs", [""])[0].endswith("test-setup.sh")]
    assert len(tests) == 1, spawns
    platform = {p["name"]: p["value"] for p in tests[0]["platform"]["properties"]}
    assert platform == {"OSFamily": "linux", "gpu": "cuda"}
    assert tests[0]["runner"] == "remote"
    digest = f"{tests[0]['digest']['hash']}/{tests[0]['digest']['sizeBytes']}"
    ran_on = {d: (w, stage) for d, w, _, stage in jobs}
    assert ran_on[digest] == (declared.name, COMPLETED), jobs


def _split(text: str):
    """The JSON execution log is a stream of objects."""
    decoder = json.JSONDecoder()
    i = 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return
        obj, end = decoder.raw_decode(text, i)
        yield json.dumps(obj)
        i = end
