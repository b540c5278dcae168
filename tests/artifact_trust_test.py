"""Signed artifacts and the no-host-code mode (docs/ARTIFACT.md, "Trust"):
real keys, real signed files, real host modules whose constructor leaves a mark
when they are dlopen'ed, so "refused before anything was loaded" is observed,
not assumed."""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
from pathlib import Path

import pytest

import modrt
from modrt._ffi import call

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
    """A host module (kind so) whose constructor leaves `mark`."""
    path = tmp_path / "host.modrt"
    modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"]).export(path)
    if mark.exists():
        mark.unlink()  # compiling may have loaded it once
    return path


def opaque_plugin() -> None:
    modrt.backend.load_plugin(Path(modrt._ffi.package_root(), "tests", "plugins", "opaque_module_plugin.so"))


def device_artifact(path: Path, text: str = "hello") -> Path:
    """A small artifact with no host code: one module of the test plugin's
    kind `opaque_test`, which loads in every build."""
    opaque_plugin()
    modrt.get_global_func("testing.opaque_module")(text).export(path)
    return path


@pytest.fixture()
def key(tmp_path: Path) -> modrt.artifact.KeyPair:
    return modrt.artifact.keygen(tmp_path / "key")


@pytest.fixture()
def other_key(tmp_path: Path) -> modrt.artifact.KeyPair:
    return modrt.artifact.keygen(tmp_path / "other")


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


def modrt_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BINARY), *args], capture_output=True, text=True, cwd=cwd, timeout=600, env={**os.environ, **(env or {})}
    )


# ---- signing and verifying ------------------------------------------------


def test_libsodium_is_inside_the_core() -> None:
    """Ed25519 comes from libsodium linked into libmodrt_runtime.so: an
    installed core needs no system libsodium and exports none of its symbols
    (a process may load another libsodium beside it)."""
    import modrt_testing

    core = modrt._ffi.find_library(modrt._ffi._selection.CORE)
    assert not [n for n in modrt_testing.needed_libraries(core) if "sodium" in n]
    exported = modrt_testing.dynamic_symbols(core, "--defined-only")
    assert "crypto_sign_verify_detached" not in exported and "sodium_init" not in exported
    assert not [s for s in exported if s.startswith(("crypto_", "sodium_", "randombytes"))]


def test_sign_and_verify_round_trip(
    host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    unsigned = host_artifact.read_bytes()
    assert modrt.artifact.read_manifest(host_artifact).signature is None
    signature = modrt.artifact.sign(host_artifact, key.secret_path)
    assert (signature.algorithm, signature.key_id) == ("ed25519", key.key_id)
    assert len(key.key_id) == 16 and modrt.artifact.key_id(key.public_path) == key.key_id

    manifest = modrt.artifact.read_manifest(host_artifact)
    assert manifest.signature == modrt.artifact.Signature("ed25519", key.key_id, False)
    # The signature is not a source of the module for readers that know it.
    assert list(manifest.modules[0].sources) == ["c"]
    verified = modrt.artifact.read_manifest(host_artifact, trusted_keys=[key.public_path])
    assert verified.signature is not None and verified.signature.verified

    # Detached: the module sections are untouched, and the file before signing comes back.
    signed = host_artifact.read_bytes()
    assert split(signed)[2] == split(unsigned)[2]
    assert call("artifact.unsigned", signed) == unsigned

    assert not mark.exists()
    module = modrt.load_module(host_artifact, trusted_keys=[key.public_path])
    assert mark.exists(), "the host module's code was loaded"
    import numpy as np

    x = modrt.tensor(np.arange(4, dtype="int32"))
    module["inc"](x, 4)
    assert x.numpy().tolist() == [1, 2, 3, 4]

    # Public keys as text, and from MODRT_TRUSTED_KEYS (several, os.pathsep-separated).
    modrt.load_module(host_artifact, trusted_keys=[Path(key.public_path).read_text()])
    other = modrt.artifact.keygen(Path(key.secret_path).parent / "env-other")
    monkeypatch.setenv("MODRT_TRUSTED_KEYS", os.pathsep.join([other.public_path, key.public_path]))
    modrt.load_module(host_artifact)


def test_signing_again_replaces_the_signature(
    tmp_path: Path, key: modrt.artifact.KeyPair, other_key: modrt.artifact.KeyPair
) -> None:
    path = device_artifact(tmp_path / "d.modrt")
    modrt.artifact.sign(path, key.secret_path)
    modrt.artifact.sign(path, other_key.secret_path)
    assert signature_text(path.read_bytes()).count(b"modrt-signature") == 1
    modrt.load_module(path, trusted_keys=[other_key.public_path])
    with pytest.raises(ValueError, match=f"signed by key id {other_key.key_id}, which is not a trusted key"):
        modrt.load_module(path, trusted_keys=[key.public_path])


def test_old_readers_load_a_signed_file(host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path) -> None:
    """`artifact.load` is ParseArtifact + LoadArtifact, the container code every
    modrt before signatures runs, which knows nothing of them: the signature
    block is one more source text of module 0 to it."""
    modrt.artifact.sign(host_artifact, key.secret_path)
    module = call("artifact.load", host_artifact.read_bytes())
    assert mark.exists() and module.kind == "so"


def test_unsigned_is_refused_when_keys_are_required_and_loads_when_not(
    host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(
        ValueError,
        match=r"host.modrt: refused: the artifact is not signed, and a signature by a "
        rf"trusted key is required \(trusted key ids: {key.key_id}\)",
    ):
        modrt.load_module(host_artifact, trusted_keys=[key.public_path])
    monkeypatch.setenv("MODRT_TRUSTED_KEYS", key.public_path)
    with pytest.raises(ValueError, match="the artifact is not signed"):
        modrt.load_module(host_artifact)
    assert not mark.exists()
    modrt.load_module(host_artifact, trusted_keys=[])  # explicitly none required
    assert mark.exists()
    monkeypatch.delenv("MODRT_TRUSTED_KEYS")
    modrt.load_module(host_artifact)


def test_another_key_is_refused(
    host_artifact: Path, key: modrt.artifact.KeyPair, other_key: modrt.artifact.KeyPair, mark: Path
) -> None:
    modrt.artifact.sign(host_artifact, key.secret_path)
    with pytest.raises(
        ValueError,
        match=rf"signed by key id {key.key_id}, which is not a trusted key "
        rf"\(trusted key ids: {other_key.key_id}\)",
    ):
        modrt.load_module(host_artifact, trusted_keys=[other_key.public_path])
    # A forged block naming the trusted key's id does not verify either.
    forged = with_signature_text(
        host_artifact.read_bytes(),
        signature_text(host_artifact.read_bytes()).replace(key.key_id.encode(), other_key.key_id.encode()),
    )
    host_artifact.write_bytes(forged)
    with pytest.raises(ValueError, match=f"the signature by key id {other_key.key_id} does not match this artifact"):
        modrt.load_module(host_artifact, trusted_keys=[other_key.public_path])
    assert not mark.exists()


def test_signature_moved_to_another_artifact_is_refused(tmp_path: Path, key: modrt.artifact.KeyPair) -> None:
    a = device_artifact(tmp_path / "a.modrt", "hello")
    b = device_artifact(tmp_path / "b.modrt", "howdy")
    for path in (a, b):
        modrt.artifact.sign(path, key.secret_path)
        modrt.load_module(path, trusted_keys=[key.public_path])
    moved = with_signature_text(b.read_bytes(), signature_text(a.read_bytes()))
    assert moved != b.read_bytes()
    b.write_bytes(moved)
    with pytest.raises(
        ValueError,
        match="does not match this artifact: its manifest changed after signing, "
        "or the signature was made for another artifact",
    ):
        modrt.load_module(b, trusted_keys=[key.public_path])


def test_every_single_byte_change_of_a_signed_file_is_refused(tmp_path: Path, key: modrt.artifact.KeyPair) -> None:
    """Each offset of a small signed file, set to every other byte value: as it
    is (integrity checks refuse most), and with the manifest hash recomputed
    (what an editor of the file can do; only the signature stands then)."""
    path = device_artifact(tmp_path / "small.modrt")
    modrt.artifact.sign(path, key.secret_path)
    signed = path.read_bytes()
    keys = ["trusted key", Path(key.public_path).read_bytes()]
    assert call("artifact.manifest", signed, *keys)  # the original verifies
    version, manifest, modules = split(signed)
    accepted = []
    tries = 0
    for offset in range(len(signed)):
        for value in range(256):
            if value == signed[offset]:
                continue
            changed = signed[:offset] + bytes([value]) + signed[offset + 1 :]
            tries += 1
            try:
                call("artifact.manifest", changed, *keys)
                accepted.append((offset, value))
            except ValueError:
                pass
    for offset in range(len(manifest)):
        for value in range(0, 256, 7):
            if value == manifest[offset]:
                continue
            changed = join(version, manifest[:offset] + bytes([value]) + manifest[offset + 1 :], modules)
            tries += 1
            try:
                call("artifact.manifest", changed, *keys)
                accepted.append(("manifest", offset, value))
            except ValueError:
                pass
    assert tries > 255 * len(signed)
    assert accepted == []

    # The test can fail: without keys, an edited source text with a fresh
    # manifest hash is a valid (unverified) artifact.
    i = signature_text(signed).index(b"\nsignature ") + len(b"\nsignature ")
    text = signature_text(signed)
    flipped = text[:i] + (b"1" if text[i : i + 1] != b"1" else b"2") + text[i + 1 :]
    unverified = with_signature_text(signed, flipped)
    assert call("artifact.manifest", unverified)
    with pytest.raises(ValueError, match="does not match this artifact"):
        call("artifact.manifest", unverified, *keys)


def test_load_refuses_a_changed_module_of_a_signed_file(
    host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path
) -> None:
    modrt.artifact.sign(host_artifact, key.secret_path)
    version, manifest, modules = split(host_artifact.read_bytes())
    host_artifact.write_bytes(join(version, manifest, [modules[0][:-1] + bytes([modules[0][-1] ^ 1])]))
    with pytest.raises(ValueError, match=r"module 0 \(so\): SHA-256 mismatch"):
        modrt.load_module(host_artifact, trusted_keys=[key.public_path])
    assert not mark.exists()


# ---- no host code -----------------------------------------------------------


def test_no_host_code_refuses_a_host_module_before_loading_it(
    host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ValueError, match=r"refused: module 0 \(so\) is host code .* host code is not allowed here"):
        modrt.load_module(host_artifact, allow_host_code=False)
    modrt.artifact.sign(host_artifact, key.secret_path)  # a signature does not make it allowed
    with pytest.raises(ValueError, match=r"module 0 \(so\) is host code"):
        modrt.load_module(host_artifact, trusted_keys=[key.public_path], allow_host_code=False)
    monkeypatch.setenv("MODRT_ALLOW_HOST_CODE", "0")
    with pytest.raises(ValueError, match=r"module 0 \(so\) is host code"):
        modrt.load_module(host_artifact)
    assert not mark.exists()
    modrt.load_module(host_artifact, allow_host_code=True)  # the argument wins over the variable
    assert mark.exists()
    monkeypatch.setenv("MODRT_ALLOW_HOST_CODE", "maybe")
    with pytest.raises(ValueError, match="MODRT_ALLOW_HOST_CODE='maybe': expected 1 or 0"):
        modrt.load_module(host_artifact)


def test_no_host_code_loads_device_modules(tmp_path: Path) -> None:
    path = device_artifact(tmp_path / "device.modrt", "device only")
    assert modrt.load_module(path, allow_host_code=False)["echo"]() == "device only"


def test_host_module_imported_below_a_device_module_is_found(tmp_path: Path, mark: Path) -> None:
    opaque_plugin()
    root = modrt.get_global_func("testing.opaque_module")("root")
    root.import_module(modrt.compile(C_SOURCE, "cpu", ["inc(int32*, int32)"]))
    path = tmp_path / "nested.modrt"
    root.export(path)
    if mark.exists():
        mark.unlink()
    with pytest.raises(ValueError, match=r"refused: module 1 \(so\) is host code"):
        modrt.load_module(path, allow_host_code=False)
    assert not mark.exists()


# ---- bad input --------------------------------------------------------------


SIGNATURE_LINE = "signature " + "ab" * 64


@pytest.mark.parametrize(
    "text, reason",
    [
        (b"", "it is empty"),
        (b"hello\n", "it does not start with 'modrt-signature 1'"),
        (b"modrt-signature 2\nalgorithm ed25519\n", "version '2' is not supported"),
        (b"modrt-signature 1\nalgorithm ed25519\nkey-id 0123456789abcdef\n", "it has 3 lines, not 4"),
        (
            f"modrt-signature 1\nalgorithm ed25519\nkey-id 0123456789abcdef\n{SIGNATURE_LINE}".encode(),
            "its last line does not end with a newline",
        ),
        (
            f"modrt-signature 1\nalgorithm ed25519\nkey-id 0123456789ABCDEF\n{SIGNATURE_LINE}\n".encode(),
            "the key id is not 16 lowercase hex digits",
        ),
        (
            b"modrt-signature 1\nalgorithm ed25519\nkey-id 0123456789abcdef\nsignature abcd\n",
            "an ed25519 signature is 128 lowercase hex digits",
        ),
        (
            f"modrt-signature 1\nalgo ed25519\nkey-id 0123456789abcdef\n{SIGNATURE_LINE}\n".encode(),
            "line 2 is not 'algorithm <value>'",
        ),
        (
            f"modrt-signature 1\nalgorithm Ed 25519\nkey-id 0123456789abcdef\n{SIGNATURE_LINE}\n".encode(),
            r"the algorithm name is not \[a-z0-9-\]",
        ),
        (b"\xff\x00\n" * 4, "it does not start with"),
    ],
)
def test_malformed_signature_block_is_refused_with_or_without_keys(
    host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path, text: bytes, reason: str
) -> None:
    modrt.artifact.sign(host_artifact, key.secret_path)
    host_artifact.write_bytes(with_signature_text(host_artifact.read_bytes(), text))
    for keys in ([key.public_path], []):
        with pytest.raises(ValueError, match="malformed signature block: " + reason):
            modrt.load_module(host_artifact, trusted_keys=keys)
    with pytest.raises(ValueError, match="malformed signature block: " + reason):
        modrt.artifact.read_manifest(host_artifact)
    assert not mark.exists()


def test_unknown_algorithm_is_refused_when_keys_are_required(
    host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path
) -> None:
    modrt.artifact.sign(host_artifact, key.secret_path)
    text = signature_text(host_artifact.read_bytes()).replace(b"algorithm ed25519", b"algorithm ml-dsa-65")
    host_artifact.write_bytes(with_signature_text(host_artifact.read_bytes(), text))
    with pytest.raises(ValueError, match="signed with unknown algorithm 'ml-dsa-65' .this modrt verifies ed25519."):
        modrt.load_module(host_artifact, trusted_keys=[key.public_path])
    assert not mark.exists()
    # Not required: a well-formed block of a newer algorithm is reported, not checked.
    assert modrt.artifact.read_manifest(host_artifact).signature.algorithm == "ml-dsa-65"


def test_two_signature_blocks_and_a_block_out_of_place_are_refused(tmp_path: Path, key: modrt.artifact.KeyPair) -> None:
    path = device_artifact(tmp_path / "d.modrt")
    modrt.artifact.sign(path, key.secret_path)
    version, manifest, modules = split(path.read_bytes())
    entry = str_field(SIG_FORMAT) + str_field(signature_text(path.read_bytes()))
    at = manifest.index(entry)
    (count,) = struct.unpack_from("<Q", manifest, at - 8)
    assert count == 1  # the opaque module has no sources of its own
    two = manifest[: at - 8] + struct.pack("<Q", 2) + entry + entry + manifest[at + len(entry) :]
    path.write_bytes(join(version, two, modules))
    with pytest.raises(ValueError, match="lists a source format twice"):
        modrt.load_module(path)
    # A source that sorts after the signature put before it: not the signed layout.
    extra = str_field(b"zz") + str_field(b"text")
    moved = manifest[: at - 8] + struct.pack("<Q", 2) + extra + entry + manifest[at + len(entry) :]
    path.write_bytes(join(version, moved, modules))
    with pytest.raises(ValueError, match="not in the order modrt writes them"):
        modrt.load_module(path, trusted_keys=[key.public_path])


def test_key_files_that_are_not_keys(
    tmp_path: Path, host_artifact: Path, key: modrt.artifact.KeyPair, mark: Path
) -> None:
    modrt.artifact.sign(host_artifact, key.secret_path)
    not_a_key = tmp_path / "notes.txt"
    not_a_key.write_text("remember the milk\n")
    damaged = tmp_path / "damaged.pub"
    damaged.write_text(Path(key.public_path).read_text()[:-5] + "\n")
    cases = [
        (key.secret_path, "this is a secret key; trust is given by the public key"),
        (not_a_key, "not a modrt public key .expected one line 'modrt ed25519 public key <64 hex digits>'"),
        (damaged, "damaged modrt public key: it needs 64 lowercase hex digits"),
    ]
    for path, reason in cases:
        with pytest.raises(ValueError, match=f"{os.fspath(path)}: {reason}"):
            modrt.load_module(host_artifact, trusted_keys=[path])
    with pytest.raises(FileNotFoundError):
        modrt.load_module(host_artifact, trusted_keys=[tmp_path / "missing.pub"])
    with pytest.raises(TypeError, match="a list of public key files"):
        modrt.load_module(host_artifact, trusted_keys=key.public_path)
    assert not mark.exists()
    with pytest.raises(ValueError, match="this is a public key; signing needs the secret key"):
        modrt.artifact.sign(host_artifact, key.public_path)
    bad_secret = tmp_path / "bad"
    text = Path(key.secret_path).read_text()
    bad_secret.write_text(text[:-3] + ("0" if text[-3] != "0" else "1") + text[-2:])
    with pytest.raises(ValueError, match="damaged modrt secret key: its public half does not belong to its seed"):
        modrt.artifact.sign(host_artifact, bad_secret)
    with pytest.raises(ValueError, match="not a modrt artifact"):
        modrt.artifact.sign(not_a_key, key.secret_path)
    assert not_a_key.read_text() == "remember the milk\n"


# ---- the command line -------------------------------------------------------


def test_cli_keygen_sign_inspect_and_run(tmp_path: Path) -> None:
    c_file = tmp_path / "vadd.c"
    c_file.write_text(
        "void vadd(const float* a, const float* b, float* c, int n) "
        "{ for (int i = 0; i < n; ++i) c[i] = a[i] + b[i]; }\n"
    )
    assert (
        modrt_cli(
            "compile", "--target=cpu", "--function=vadd(float32*, float32*, float32*, int32)", str(c_file), cwd=tmp_path
        ).returncode
        == 0
    )
    made = modrt_cli("keygen", "build-key", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    key_id = made.stdout.split("key id:")[1].strip()
    assert (tmp_path / "build-key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "build-key.pub").read_text().startswith("modrt ed25519 public key ")
    again = modrt_cli("keygen", "build-key", cwd=tmp_path)
    assert again.returncode == 1 and "build-key exists; pass --force" in again.stderr
    assert modrt_cli("keygen", "other", cwd=tmp_path).returncode == 0

    assert "\nunsigned\n" in modrt_cli("inspect", "vadd.modrt", cwd=tmp_path).stdout
    unsigned_run = modrt_cli(
        "run", "--function=vadd", "--trusted-key=build-key.pub", "vadd.modrt", "--", "4", "4", "4", "4", cwd=tmp_path
    )
    assert unsigned_run.returncode == 1 and "the artifact is not signed" in unsigned_run.stderr

    signed = modrt_cli("sign", "--key=build-key", "vadd.modrt", cwd=tmp_path)
    assert signed.returncode == 0, signed.stderr
    assert f"vadd.modrt: signed (ed25519, key id {key_id})" in signed.stdout
    shown = modrt_cli("inspect", "vadd.modrt", cwd=tmp_path)
    assert f"signed: ed25519, key id {key_id} (not verified" in shown.stdout
    verified = modrt_cli("inspect", "--trusted-key=build-key.pub", "vadd.modrt", cwd=tmp_path)
    assert f"key id {key_id} (verified against a trusted key)" in verified.stdout
    assert f'"key_id": "{key_id}"' in modrt_cli("inspect", "--json", "vadd.modrt", cwd=tmp_path).stdout

    ok = modrt_cli(
        "run",
        "--function=vadd",
        "--trusted-key=other.pub",
        "--trusted-key=build-key.pub",
        "vadd.modrt",
        "--",
        "4",
        "4",
        "4",
        "4",
        cwd=tmp_path,
    )
    assert ok.returncode == 0 and "arg 2: float32[4]" in ok.stdout, ok.stderr
    for args, env, reason in [
        (["--trusted-key=other.pub"], {}, "which is not a trusted key"),
        ([], {"MODRT_TRUSTED_KEYS": "other.pub"}, "which is not a trusted key"),
        (["--no-host-code"], {}, r"module 0 (so) is host code"),
        ([], {"MODRT_ALLOW_HOST_CODE": "0"}, r"module 0 (so) is host code"),
        (["--trusted-key=build-key"], {}, "this is a secret key"),
    ]:
        refused = modrt_cli(
            "run", "--function=vadd", *args, "vadd.modrt", "--", "4", "4", "4", "4", cwd=tmp_path, env=env
        )
        assert refused.returncode == 1 and reason in refused.stderr, (args, refused.stderr)
        assert "Traceback" not in refused.stderr
    wrong = modrt_cli("inspect", "--trusted-key=other.pub", "vadd.modrt", cwd=tmp_path)
    assert wrong.returncode == 1 and "which is not a trusted key" in wrong.stderr

    assert modrt_cli("sign", "vadd.modrt", cwd=tmp_path).returncode == 2
    to_copy = modrt_cli("sign", "--key=other", "--output=copy.modrt", "vadd.modrt", cwd=tmp_path)
    assert to_copy.returncode == 0, to_copy.stderr
    assert modrt.artifact.read_manifest(tmp_path / "vadd.modrt").signature.key_id == key_id
    assert modrt.artifact.read_manifest(tmp_path / "copy.modrt").signature.key_id != key_id
