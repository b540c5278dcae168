"""modrt keygen: make an Ed25519 key pair for signing artifacts.

usage: modrt keygen [--force] KEYFILE

Writes the secret key to KEYFILE (mode 0600; it signs, keep it on the build
machine) and the public key to KEYFILE.pub (give it to whoever loads the
artifacts: `modrt run --trusted-key=KEYFILE.pub`, MODRT_TRUSTED_KEYS,
`modrt.load_module(path, trusted_keys=[...])`). Prints the key id that
`modrt inspect` shows for files signed with it. Only libmodrt_runtime.so is
loaded.
"""

from __future__ import annotations

from . import _common
from ._flags import FLAGS, define


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_bool, "force", False, "Overwrite KEYFILE and KEYFILE.pub if they exist.")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        return _common.fail("keygen takes one KEYFILE (the public key goes to KEYFILE.pub)", 2)
    modrt = _common.import_modrt(runtimes=False)
    try:
        pair = modrt.artifact.keygen(argv[0], overwrite=FLAGS.force)
    except FileExistsError as e:
        return _common.fail(f"{e.filename} exists; pass --force to replace it")
    except (OSError, ValueError) as e:
        return _common.fail(str(e))
    print(f"secret key: {pair.secret_path}\npublic key: {pair.public_path}\nkey id:     {pair.key_id}")
    return 0
