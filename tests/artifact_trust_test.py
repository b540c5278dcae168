"""Signed artifacts (docs/ARTIFACT.md, "Trust"): real keys, real signed
files, real host modules whose constructor leaves a mark when they are
dlopen'ed, so "refused before anything was loaded" is observed, not assumed;
and every way a signature or its block can be wrong."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

# The shared fixtures, found by pytest in this module's namespace.
from artifact_trust_testing import (  # noqa: F401
    MARK_VARIABLE,
    SIG_FORMAT,
    device_artifact,
    host_artifact,
    join,
    key,
    mark,
    no_trust_environment,
    signature_text,
    split,
    str_field,
    with_signature_text,
)

import modrt
from modrt._ffi import call


@pytest.fixture()
def other_key(tmp_path: Path) -> modrt.artifact.KeyPair:
    return modrt.artifact.keygen(tmp_path / "other")


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
