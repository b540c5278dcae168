"""What the artifact trust tests share (docs/ARTIFACT.md, "Trust"): a host
module whose constructor leaves a mark when it is dlopen'ed, a device-only
artifact, and the byte surgery an attacker can do on a file (its manifest
hash recomputed), and the fixtures the three test files share."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
from pathlib import Path

import pytest

import modrt

BINARY = Path(os.environ["TEST_SRCDIR"], "_main", "tools", "modrt")
MAGIC = b"MODRTART"
SIG_FORMAT = b"modrt.signature"
# The host module's constructor creates the file named by this variable: it
# exists exactly when the host module's code was loaded into this process.
MARK_VARIABLE = "MODRT_TRUST_TEST_MARK"
C_SOURCE = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void loaded(void) {
  const char* p = getenv("MODRT_TRUST_TEST_MARK");
  if (p != NULL) { int fd = open(p, O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }
}
void inc(int* x, int n) { for (int i = 0; i < n; ++i) x[i] += 1; }
"""


def opaque_plugin() -> None:
    modrt.backend.load_plugin(Path(modrt._ffi.package_root(), "tests", "plugins", "opaque_module_plugin.so"))


def device_artifact(path: Path, text: str = "hello") -> Path:
    """A small artifact with no host code: one module of the test plugin's
    kind `opaque_test`, which loads in every build."""
    opaque_plugin()
    modrt.get_global_func("testing.opaque_module")(text).export(path)
    return path


def split(data: bytes) -> tuple[int, bytes, list[bytes]]:
    assert data[:8] == MAGIC
    (version,) = struct.unpack_from("<H", data, 8)
    pos, fields = 10, []
    while pos < len(data):
        (n,) = struct.unpack_from("<Q", data, pos)
        fields.append(data[pos + 8 : pos + 8 + n])
        pos += 8 + n
    manifest, _digest, *modules = fields
    return version, manifest, modules


def join(version: int, manifest: bytes, modules: list[bytes]) -> bytes:
    """An artifact with `manifest` and a freshly computed manifest hash: what an
    attacker who edits a file can always make."""

    def s(b: bytes) -> bytes:
        return struct.pack("<Q", len(b)) + b

    body = s(manifest) + s(hashlib.sha256(manifest).digest()) + b"".join(s(m) for m in modules)
    return MAGIC + struct.pack("<H", version) + body


def str_field(b: bytes) -> bytes:
    return struct.pack("<Q", len(b)) + b


def signature_text(data: bytes) -> bytes:
    _, manifest, _ = split(data)
    at = manifest.index(str_field(SIG_FORMAT)) + 8 + len(SIG_FORMAT)
    (n,) = struct.unpack_from("<Q", manifest, at)
    return manifest[at + 8 : at + 8 + n]


def with_signature_text(data: bytes, text: bytes) -> bytes:
    version, manifest, modules = split(data)
    old = str_field(SIG_FORMAT) + str_field(signature_text(data))
    assert manifest.count(old) == 1
    return join(version, manifest.replace(old, str_field(SIG_FORMAT) + str_field(text)), modules)


def host_artifact_file(path: Path, mark: Path) -> Path:
    """A host module (kind so) at `path` whose constructor leaves `mark`."""
    modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"]).export(path)
    if mark.exists():
        mark.unlink()  # compiling may have loaded it once
    return path


def modrt_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The `modrt` command line (//tools:modrt)."""
    return subprocess.run(
        [str(BINARY), *args], capture_output=True, text=True, cwd=cwd, timeout=600, env={**os.environ, **(env or {})}
    )


# Fixtures shared by the artifact trust tests (each imports them by name).
@pytest.fixture(autouse=True)
def no_trust_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MODRT_TRUSTED_KEYS", raising=False)
    monkeypatch.delenv("MODRT_ALLOW_HOST_CODE", raising=False)


@pytest.fixture()
def mark(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "host-code-was-loaded"
    monkeypatch.setenv(MARK_VARIABLE, str(path))
    return path


@pytest.fixture()
def host_artifact(tmp_path: Path, mark: Path) -> Path:
    return host_artifact_file(tmp_path / "host.modrt", mark)


@pytest.fixture()
def key(tmp_path: Path) -> modrt.artifact.KeyPair:
    return modrt.artifact.keygen(tmp_path / "key")
