"""Trust keys across a session (docs/ARTIFACT.md, "Trust"): a session given a
key loads only artifacts signed by it, on the driver and on every worker. The
host module leaves a mark file when a process dlopens it, so "nothing was
loaded" is observed on the workers, not assumed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from distributed_testing import WORKERS

import modrt
import modrt.distributed as md

MARK_VARIABLE = "MODRT_DISTRIBUTED_TEST_MARK"
SOURCE = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) {
  const char* p = getenv("MODRT_DISTRIBUTED_TEST_MARK");
  if (p != NULL) { int fd = open(p, O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }
}
void inc(int* x, int n) { for (int i = 0; i < n; ++i) x[i] += 1; }
"""


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> tuple[modrt.artifact.KeyPair, modrt.artifact.KeyPair]:
    d = tmp_path_factory.mktemp("keys")
    return modrt.artifact.keygen(d / "trusted"), modrt.artifact.keygen(d / "other")


@pytest.fixture(scope="module")
def mark_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("marks")


@pytest.fixture(scope="module")
def session(keys: tuple[modrt.artifact.KeyPair, modrt.artifact.KeyPair], mark_dir: Path) -> Iterator[md.Session]:
    os.environ.pop("MODRT_TRUSTED_KEYS", None)
    # The workers of the local cluster inherit it, and so write their marks there.
    os.environ[MARK_VARIABLE] = str(mark_dir / "loaded")
    with md.Session(devices=WORKERS, timeout=60, trusted_keys=[keys[0].public_path]) as sess:
        yield sess


def artifact(path: Path, mark_dir: Path, key: modrt.artifact.KeyPair | None) -> bytes:
    modrt.compile(SOURCE, "cpu", ["inc(int32*, int32)"]).export(path)
    if key is not None:
        modrt.artifact.sign(path, key.secret_path)
    (mark_dir / "loaded").unlink(missing_ok=True)  # compiling here loaded it once
    return path.read_bytes()


def test_a_signed_artifact_runs_on_every_worker(session: md.Session, keys, mark_dir: Path, tmp_path: Path) -> None:
    data = artifact(tmp_path / "signed.modrt", mark_dir, keys[0])
    dmod = session.load(data)
    assert (mark_dir / "loaded").exists()
    x = session.shard(np.arange(WORKERS * 2, dtype="int32"))
    dmod["inc"](x, 2)
    assert x.numpy().tolist() == list(range(1, WORKERS * 2 + 1))
    # Also as a path.
    session.load(tmp_path / "signed.modrt")


@pytest.mark.parametrize("signer", ["unsigned", "other key"])
def test_unsigned_or_wrongly_signed_is_refused_before_any_worker_loads_it(
    session: md.Session, keys, mark_dir: Path, tmp_path: Path, signer: str
) -> None:
    data = artifact(tmp_path / "a.modrt", mark_dir, None if signer == "unsigned" else keys[1])
    with pytest.raises(ValueError, match="not signed|not trusted|untrusted|key"):
        session.load(data)
    # A module object compiled here is exported unsigned: refused too.
    with pytest.raises(ValueError):
        session.load(modrt.compile(SOURCE, "cpu", ["inc(int32*, int32)"]))
    (mark_dir / "loaded").unlink(missing_ok=True)
    with pytest.raises(ValueError):
        session.load(data)
    assert not (mark_dir / "loaded").exists(), "a worker loaded the refused artifact"


def test_every_worker_checks_the_keys_itself(session: md.Session, keys, mark_dir: Path, tmp_path: Path) -> None:
    """The workers' own check, reached past the driver's (the driver refuses first)."""
    data = artifact(tmp_path / "b.modrt", mark_dir, keys[1])
    ref = session._ray.put(data)
    key_text = Path(keys[0].public_path).read_text()
    for rank, actor in enumerate(session._actors):
        with pytest.raises(ValueError, match=rf"load: worker {rank} \(pid"):
            session._wait({rank: actor.load.remote(99, ref, [key_text], None)}, "load")
    assert not (mark_dir / "loaded").exists()


def test_no_host_code(session: md.Session, keys, mark_dir: Path, tmp_path: Path) -> None:
    data = artifact(tmp_path / "c.modrt", mark_dir, keys[0])
    with pytest.raises(ValueError, match="host code"):
        session.load(data, allow_host_code=False)
    assert not (mark_dir / "loaded").exists()
