"""The no-host-code mode (docs/ARTIFACT.md, "Trust"): an artifact's host
modules (kind so, native code that loading would dlopen) are refused before
anything is loaded, wherever they sit in the tree; device modules load."""

from __future__ import annotations

from pathlib import Path

import pytest

# The shared fixtures, found by pytest in this module's namespace.
from artifact_trust_testing import (  # noqa: F401
    C_SOURCE,
    MARK_VARIABLE,
    device_artifact,
    host_artifact,
    key,
    mark,
    no_trust_environment,
    opaque_plugin,
)

import modrt


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
