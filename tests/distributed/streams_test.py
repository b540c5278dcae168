"""Collectives ordered on modrt streams (Session.stream()): a collective on
one stream completes while a kernel still runs on another stream of the same
workers' devices, and one on the stream of a launch waits for that launch;
a launch after it on that stream sees its result. The running kernel is
held by a file the test creates, so nothing here depends on timing."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from distributed_testing import WORKERS

import modrt
import modrt.distributed as md

RELEASE_VARIABLE = "MODRT_DISTRIBUTED_TEST_RELEASE"
SOURCE = r"""
#include <stdlib.h>
#include <unistd.h>
/* runs until the file named by MODRT_DISTRIBUTED_TEST_RELEASE exists (60 s at most) */
void hold(int* done) {
  const char* p = getenv("MODRT_DISTRIBUTED_TEST_RELEASE");
  for (int i = 0; i < 60000 && p != NULL && access(p, F_OK) != 0; ++i) usleep(1000);
  done[0] = 1;
}
/* x[i] = value, after `ms` milliseconds */
void late_fill(float* x, float value, int ms, int n) {
  usleep((useconds_t)ms * 1000);
  for (int i = 0; i < n; ++i) x[i] = value;
}
void add(float* x, float value, int n) { for (int i = 0; i < n; ++i) x[i] += value; }
"""
SIGNATURES = ["hold(int32*)", "late_fill(float32*, float32, int32, int32)", "add(float32*, float32, int32)"]


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("release") / "go"


@pytest.fixture(scope="module")
def session(release: Path) -> Iterator[md.Session]:
    # The workers of the local cluster inherit it.
    os.environ[RELEASE_VARIABLE] = str(release)
    with md.Session(devices=WORKERS, timeout=60) as sess:
        yield sess


@pytest.fixture(scope="module")
def dmod(session: md.Session) -> md.DModule:
    return session.load(modrt.compile(SOURCE, "cpu", SIGNATURES))


def test_a_collective_on_one_stream_overlaps_a_kernel_on_another(
    session: md.Session, dmod: md.DModule, release: Path
) -> None:
    compute, comm = session.stream(), session.stream()
    values = np.arange(WORKERS * 5, dtype="float32")
    x, y = session.shard(values), session.shard(values)
    done = session.shard(np.zeros(WORKERS, "int32"))
    dmod["hold"](done, stream=compute)  # launched; runs until the file exists
    session.allreduce(x, "sum", stream=comm)
    gathered = session.allgather(y, stream=comm)
    session.synchronize(comm)
    # Both collectives finished while every worker's kernel on `compute` still runs.
    assert not session.query(compute)
    release.touch()
    session.synchronize(compute)
    assert session.query(compute)
    np.testing.assert_array_equal(done.numpy(), np.ones(WORKERS, "int32"))
    expected = sum(np.split(values, WORKERS))
    for part in session.local_parts(x):
        np.testing.assert_array_equal(part, expected)
    np.testing.assert_array_equal(gathered.numpy(), values)


def test_a_collective_on_a_launchs_stream_waits_for_it(session: md.Session, dmod: md.DModule) -> None:
    s = session.stream()
    n = 1000
    x = session.shard(np.zeros(WORKERS * n, "float32"))
    # The fill happens half a second after the launch returned; the
    # allreduce, given next on the same stream, must reduce the filled values.
    dmod["late_fill"](x, 2.0, 500, n, stream=s)
    session.allreduce(x, "sum", stream=s)
    dmod["add"](x, 1.0, n, stream=s)  # after the allreduce on that stream
    session.synchronize(s)
    for part in session.local_parts(x):
        np.testing.assert_array_equal(part, np.full(n, 2.0 * WORKERS + 1.0, "float32"))


def test_streams_of_another_kind_are_refused(session: md.Session, dmod: md.DModule) -> None:
    x = session.shard(np.zeros(WORKERS, "float32"))
    with pytest.raises(TypeError, match="expected a stream of this session"):
        session.allreduce(x, "sum", stream=modrt.Stream(modrt.cpu()))
    with pytest.raises(TypeError, match="pass a stream of this session"):
        session.query(None)
