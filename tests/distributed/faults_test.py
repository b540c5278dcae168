"""Faults: a worker killed in the middle of an allreduce or a call, a worker
that never joins a collective; each ends in its named error within its bound,
the session closes, and no process of the cluster is left behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest
from distributed_testing import WORKERS, alive, kernels, processes_mentioning
from ray_hosts import ray_environment

import modrt.distributed as md

NAPPER = 1  # the worker that sleeps in `nap`
# A driver interrupted in the middle of a call (the test sends it SIGINT).
INTERRUPTED_DRIVER = r"""
import numpy as np
import modrt.distributed as md
from distributed_testing import kernels

with md.Session(devices=2, timeout=60) as sess:
    dmod = sess.load(kernels())
    flags = sess.shard(np.ones(2, "int32"))
    print(sess._temp_dir, *[w.pid for w in sess.workers], flush=True)
    dmod["nap"](flags, 60000)
"""


@pytest.fixture()
def session() -> Iterator[md.Session]:
    """A session of its own per test (a test kills one of its workers)."""
    with md.Session(devices=WORKERS, timeout=60) as sess:
        yield sess


def nap_in_background(sess: md.Session, seconds: float) -> md.Launch:
    """Worker NAPPER sleeps `seconds` in a kernel; the others return at once.
    Whatever the session is given next waits behind the nap on that worker
    (make the tensors a test needs first)."""
    dmod = sess.load(kernels())
    flags = np.zeros(WORKERS, "int32")
    flags[NAPPER] = 1
    launch = dmod["nap"](sess.shard(flags), int(seconds * 1000), wait=False)
    assert isinstance(launch, md.Launch)
    return launch


def test_a_worker_killed_mid_allreduce_is_a_worker_error(session: md.Session) -> None:
    victim = session.workers[NAPPER]
    temp_dir = session._temp_dir
    assert temp_dir and processes_mentioning(temp_dir), "the local cluster's processes are not visible"
    tensor = session.shard(np.ones(WORKERS * 1000, "float32"))
    nap = nap_in_background(session, 60)
    killed_at: list[float] = []

    def kill() -> None:
        time.sleep(2)  # the others are inside the allreduce, waiting for the napper
        killed_at.append(time.monotonic())
        os.kill(victim.pid, signal.SIGKILL)

    killer = threading.Thread(target=kill)
    killer.start()
    with pytest.raises(md.WorkerError) as caught:
        session.allreduce(tensor, "sum")
    failed_at = time.monotonic()
    killer.join()
    assert failed_at - killed_at[0] < 10
    message = str(caught.value)
    assert message.startswith("allreduce(sum): lost ")
    assert f"worker {NAPPER} (pid {victim.pid}, cpu device" in message
    assert f"on node {victim.host} [{victim.node_id[:12]}]" in message
    assert [w.rank for w in caught.value.workers] == [NAPPER]
    # The call the worker died in fails the same way.
    with pytest.raises(md.WorkerError, match=f"call nap: lost worker {NAPPER} "):
        nap.wait()

    pids = [w.pid for w in session.workers]
    session.close()
    session.close()  # closing again is nothing
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (any(alive(p) for p in pids) or processes_mentioning(temp_dir)):
        time.sleep(0.2)
    assert not [p for p in pids if alive(p)], "worker processes left behind"
    assert not processes_mentioning(temp_dir), "cluster processes left behind"
    with pytest.raises(RuntimeError, match="closed"):
        session.barrier()


def test_a_worker_killed_mid_call_is_a_worker_error_and_a_new_session_opens(session: md.Session) -> None:
    victim = session.workers[NAPPER]
    nap = nap_in_background(session, 60)
    time.sleep(2)
    killed_at = time.monotonic()
    os.kill(victim.pid, signal.SIGKILL)
    with pytest.raises(md.WorkerError, match=f"^call nap: lost worker {NAPPER} "):
        nap.wait()
    assert time.monotonic() - killed_at < 10
    # The survivors still answer; the lost one is named by every later wait.
    with pytest.raises(md.WorkerError, match="barrier: lost worker 1"):
        session.barrier()
    session.close()
    with md.Session(devices=2, timeout=60) as again:
        x = again.shard(np.arange(4, dtype="float32"))
        again.allreduce(x)
        assert again.local_parts(x)[0].tolist() == [2, 4]


def test_a_worker_that_never_joins_ends_in_the_timeout(session: md.Session) -> None:
    tensor = session.shard(np.ones(WORKERS, "int64"))
    nap = nap_in_background(session, 8)
    start = time.monotonic()
    with pytest.raises(md.WorkerTimeout) as caught:
        session.allreduce(tensor, "max", timeout=2)
    assert 1.5 < time.monotonic() - start < 8
    assert [w.rank for w in caught.value.workers] == [NAPPER]
    assert "allreduce(max): never joined within the timeout: worker 1 (pid" in str(caught.value)
    nap.wait(timeout=30)
    # Once it is back, the session goes on.
    session.allreduce(tensor, "sum")
    assert session.local_parts(tensor)[0].tolist() == [WORKERS]


def test_ctrl_c_on_the_driver_ends_the_session_and_its_processes() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    env = ray_environment(here)
    driver = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED_DRIVER], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    try:
        line = driver.stdout.readline()
        assert line.strip(), driver.stderr.read()[-4000:]
        temp_dir, *pids = line.split()
        time.sleep(2)  # inside the call
        interrupted_at = time.monotonic()
        driver.send_signal(signal.SIGINT)
        _, stderr = driver.communicate(timeout=60)
    finally:
        driver.kill()
    assert time.monotonic() - interrupted_at < 30
    assert driver.returncode != 0 and "KeyboardInterrupt" in stderr, stderr[-4000:]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (any(alive(int(p)) for p in pids) or processes_mentioning(temp_dir)):
        time.sleep(0.2)
    assert not [p for p in pids if alive(int(p))], "worker processes left behind"
    assert not processes_mentioning(temp_dir), "cluster processes left behind"
