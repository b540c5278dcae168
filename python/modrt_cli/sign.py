"""modrt sign: sign a .modrt file with an Ed25519 secret key.

usage: modrt sign --key=KEYFILE [--output=OUT.modrt] FILE.modrt

Adds a detached Ed25519 signature over the manifest (which holds every
module's size and SHA-256) to the file, in place unless --output is given;
a previous signature is replaced. The file is checked first: only an intact
artifact is signed. Readers without signature support load the signed file
as before. Only libmodrt_runtime.so is loaded.
"""

from __future__ import annotations

from . import _common
from ._flags import FLAGS, define


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_string, "key", None, "The secret key file (from `modrt keygen`).")
    define(flags.DEFINE_string, "output", None, "Write the signed file here instead of replacing FILE.")


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        return _common.fail("sign takes one .modrt file", 2)
    if not FLAGS.key:
        return _common.fail("sign needs --key=KEYFILE (make one with `modrt keygen KEYFILE`)", 2)
    modrt = _common.import_modrt(runtimes=False)
    try:
        signature = modrt.artifact.sign(argv[0], FLAGS.key, FLAGS.output)
    except (OSError, ValueError) as e:
        return _common.fail(str(e))
    print(f"{FLAGS.output or argv[0]}: signed ({signature.algorithm}, key id {signature.key_id})")
    return 0
