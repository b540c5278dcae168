"""Keys for signed artifacts (docs/ARTIFACT.md, "Trust"): Ed25519 inside the
core, key files that are not keys named as such, and the `modrt` command
line's keygen, sign, inspect and run with trusted keys."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# The shared fixtures, found by pytest in this module's namespace.
from artifact_trust_testing import (  # noqa: F401
    MARK_VARIABLE,
    host_artifact,
    key,
    mark,
    modrt_cli,
    no_trust_environment,
)

import modrt


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
