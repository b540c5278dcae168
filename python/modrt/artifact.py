"""`.modrt` artifact files: a module tree with a manifest.

The container is parsed and verified once, in the core (core/src/artifact.cc);
this module only reads files and shapes the manifest. Reading a manifest needs
libmodrt_runtime.so alone, no backend runtime.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Union

from ._ffi import Object, call

# The modules this file reads and writes are the core's module objects
# (modrt.Module, which modrt.modules defines on top of this layer: it imports
# this module for Module.export and load_module, never the reverse).
ModuleObject = Object

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class FunctionEntry:
    name: str
    signature: str | None  # None for opaque (non-payload) modules


@dataclass(frozen=True)
class ModuleEntry:
    index: int
    kind: str
    parent: int | None  # the importing module; None for the root
    shape: str  # "single-binary", "multi-shader" or "opaque"
    fmt: str
    functions: tuple[FunctionEntry, ...]
    size: int
    sha256: str
    sources: dict[str, str]


@dataclass(frozen=True)
class Signature:
    algorithm: str  # "ed25519"
    key_id: str  # 16 hex digits: the start of the SHA-256 of the signer's public key
    verified: bool  # checked against trusted keys when the manifest was read


@dataclass(frozen=True)
class Manifest:
    format_version: int
    modules: tuple[ModuleEntry, ...]
    signature: Signature | None = None  # None: the file is not signed

    @classmethod
    def from_json(cls, text: str) -> Manifest:
        raw = json.loads(text)
        modules = tuple(
            ModuleEntry(
                index=m["index"],
                kind=m["kind"],
                parent=m["parent"],
                shape=m["shape"],
                fmt=m["fmt"],
                functions=tuple(FunctionEntry(f["name"], f["signature"]) for f in m["functions"]),
                size=m["size"],
                sha256=m["sha256"],
                sources=dict(m["sources"]),
            )
            for m in raw["modules"]
        )
        sig = raw.get("signature")
        signature = None if sig is None else Signature(sig["algorithm"], sig["key_id"], sig["verified"])
        return cls(raw["format_version"], modules, signature)


TrustedKeys = Sequence[Union[str, bytes, "os.PathLike[str]"]]

PUBLIC_KEY_PREFIX = "modrt ed25519 public key "
SECRET_KEY_PREFIX = "modrt ed25519 secret key "


def _key_args(keys: TrustedKeys | None) -> list[Any]:
    """(origin, text) pairs for the core: each key is a public key file's path,
    or the key's own text (as `modrt keygen` writes it, str or bytes)."""
    if keys is None:
        return []
    if isinstance(keys, (str, bytes, os.PathLike)):
        raise TypeError("trusted_keys is a list of public key files or key texts, not one")
    args: list[Any] = []
    for i, key in enumerate(keys):
        if isinstance(key, bytes):
            args += [f"trusted_keys[{i}]", key]
        elif isinstance(key, str) and key.startswith("modrt "):
            args += [f"trusted_keys[{i}]", key.encode()]
        elif isinstance(key, (str, os.PathLike)):
            args += [os.fspath(key), _read(key)]
        else:
            raise TypeError(f"trusted_keys[{i}]: expected a path or a key's text, got {type(key).__name__}")
    return args


def trusted_keys_from_env() -> list[str]:
    """The public key files named by MODRT_TRUSTED_KEYS (os.pathsep-separated)."""
    return [p for p in os.environ.get("MODRT_TRUSTED_KEYS", "").split(os.pathsep) if p]


def _resolve_keys(trusted_keys: TrustedKeys | None) -> TrustedKeys:
    return trusted_keys_from_env() if trusted_keys is None else trusted_keys


def resolve_allow_host_code(allow_host_code: bool | None) -> bool:
    if allow_host_code is not None:
        return bool(allow_host_code)
    value = os.environ.get("MODRT_ALLOW_HOST_CODE", "1").strip().lower()
    if value in ("1", "true", "yes", "on", ""):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"MODRT_ALLOW_HOST_CODE={value!r}: expected 1 or 0")


def check_no_host_code(manifest: Manifest) -> None:
    """ValueError if the manifest lists a host module (kind `so`): the check
    `load_module(..., allow_host_code=False)` makes in the core, for callers
    that want the answer from the manifest alone."""
    for m in manifest.modules:
        if m.kind == "so":
            raise ValueError(
                f"refused: module {m.index} (so) is host code (a native shared object that loading would dlopen "
                "into this process), and host code is not allowed here "
                "(allow_host_code=False, --no-host-code or MODRT_ALLOW_HOST_CODE=0)"
            )


def _read(path: PathLike) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def save(module: ModuleObject) -> bytes:
    """The artifact bytes of `module` and, depth-first, its imports."""
    return call("artifact.save", module)


def export(module: ModuleObject, path: PathLike) -> None:
    _write(path, save(module))


def _write(path: PathLike, data: bytes) -> None:
    tmp = f"{os.fspath(path)}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)  # never leaves a half-written artifact behind


def manifest_from_bytes(data: bytes, trusted_keys: TrustedKeys | None = None) -> Manifest:
    """The verified manifest (every integrity check runs first). With
    `trusted_keys` the signature must verify against one of them (ValueError
    otherwise) and `manifest.signature.verified` is True; without, the
    signature is reported, not checked. MODRT_TRUSTED_KEYS does not apply."""
    return Manifest.from_json(call("artifact.manifest", data, *_key_args(trusted_keys)))


def read_manifest(path: PathLike, trusted_keys: TrustedKeys | None = None) -> Manifest:
    return _named(path, lambda: manifest_from_bytes(_read(path), trusted_keys))


def load_from_bytes(
    data: bytes, trusted_keys: TrustedKeys | None = None, allow_host_code: bool | None = None
) -> ModuleObject:
    """`load_module` on bytes."""
    keys = _key_args(_resolve_keys(trusted_keys))
    return call("artifact.load_trusted", data, int(resolve_allow_host_code(allow_host_code)), *keys)


def load_module(
    path: PathLike, trusted_keys: TrustedKeys | None = None, allow_host_code: bool | None = None
) -> ModuleObject:
    """Loads an artifact written by `Module.export`: integrity first, then the
    trust checks, then a real module for every entry (a kind with no runtime
    here is refused). Nothing is created or loaded before every check passed.

    trusted_keys: public key files (or key texts); when non-empty the file must
        carry a valid signature by one of them. None (the default) takes the
        files named in MODRT_TRUSTED_KEYS; [] requires no signature.
    allow_host_code: False refuses an artifact holding a host module (kind
        `so`, native code that loading dlopens). None (the default) takes
        MODRT_ALLOW_HOST_CODE, itself 1 (allowed) by default.
    """
    return _named(path, lambda: load_from_bytes(_read(path), trusted_keys, allow_host_code))


def _named(path: PathLike, body: Any) -> Any:
    try:
        return body()
    except Exception as e:
        # The path belongs in the message; the exception class stays the same.
        e.args = (f"{os.fspath(path)}: {e}",) + e.args[1:]
        raise


def sign_bytes(data: bytes, key: str | bytes | os.PathLike[str]) -> bytes:
    """The artifact `data` signed with a secret key (file path or key text)."""
    origin, text = _secret_key(key)
    return call("artifact.sign", data, origin, text)


def sign(path: PathLike, key: str | bytes | os.PathLike[str], output: PathLike | None = None) -> Signature:
    """Signs the artifact at `path` (in place, or into `output`) with a secret
    key; an existing signature is replaced."""
    signed = _named(path, lambda: sign_bytes(_read(path), key))
    _write(output if output is not None else path, signed)
    manifest = manifest_from_bytes(signed)
    assert manifest.signature is not None
    return manifest.signature


def signature_block(data: bytes) -> bytes | None:
    """The text of the signature block of an artifact's bytes (None: unsigned);
    what `modrt.artifact.unsigned_bytes(data)` removes."""
    unsigned = unsigned_bytes(data)
    if unsigned == data:
        return None
    return call("artifact.signature_block", data)


def unsigned_bytes(data: bytes) -> bytes:
    """The artifact as it was before it was signed (itself when unsigned)."""
    return call("artifact.unsigned", data)


def _secret_key(key: str | bytes | os.PathLike[str]) -> tuple[str, bytes]:
    if isinstance(key, bytes):
        return "key", key
    if isinstance(key, str) and key.startswith("modrt "):
        return "key", key.encode()
    return os.fspath(key), _read(key)


@dataclass(frozen=True)
class KeyPair:
    secret_path: str
    public_path: str
    key_id: str


def keygen(path: PathLike, overwrite: bool = False) -> KeyPair:
    """Writes a new Ed25519 key pair: the secret key to `path` (mode 0600) and
    the public key to `path`.pub."""
    secret = call("artifact.keygen")
    kind, key_id, public = call("artifact.key_info", "new key", secret.encode()).split(" ", 2)
    secret_path, public_path = os.fspath(path), os.fspath(path) + ".pub"
    flags = os.O_WRONLY | os.O_CREAT | (os.O_TRUNC if overwrite else os.O_EXCL)
    for target, text, mode in ((secret_path, secret, 0o600), (public_path, public, 0o644)):
        fd = os.open(target, flags, mode)
        with os.fdopen(fd, "w") as f:
            f.write(text)
    return KeyPair(secret_path, public_path, key_id)


def key_id(key: str | bytes | os.PathLike[str]) -> str:
    """The id of a public or secret key (file path or key text)."""
    origin, text = _secret_key(key)
    return call("artifact.key_info", origin, text).split(" ", 2)[1]
