"""modrt inspect: the manifest and sources of a .modrt file, no runtime needed.

usage: modrt inspect [--json] [--sources] [--format=FMT] [--trusted-key=KEY.pub ...] FILE.modrt

Every integrity check of loading runs first (a damaged file is refused with the
module and the reason), but only libmodrt_runtime.so is loaded: no compiler, no
backend runtime, no driver. It says whether the file is signed and by which
key id; with --trusted-key (repeatable) the signature must also verify
against one of the keys (exit 1 otherwise).
"""

from __future__ import annotations

import dataclasses
import json
import sys

from . import _common
from ._flags import FLAGS, define


def define_flags() -> None:
    from absl import flags

    define(flags.DEFINE_bool, "json", False, "Print the manifest as JSON (sources included).")
    define(flags.DEFINE_bool, "sources", False, "Also print every source text the file holds.")
    define(flags.DEFINE_string, "format", None, "Print only the sources of this format (c, cl, glsl, ...).")
    define(
        flags.DEFINE_multi_string,
        "trusted-key",
        None,
        "A public key file; repeatable. The signature must verify against one of them.",
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        return _common.fail("inspect takes one .modrt file", 2)
    modrt = _common.import_modrt(runtimes=False)
    try:
        manifest = modrt.artifact.read_manifest(argv[0], trusted_keys=FLAGS["trusted-key"].value or None)
    except (OSError, ValueError) as e:
        return _common.fail(f"{argv[0]}: {e}")
    if FLAGS.json:
        print(json.dumps(dataclasses.asdict(manifest), indent=2))
        return 0
    if FLAGS.format is None:
        print(
            f"{argv[0]}: modrt artifact, format version {manifest.format_version}, "
            f"{len(manifest.modules)} module{'s' if len(manifest.modules) != 1 else ''}"
        )
        sig = manifest.signature
        if sig is None:
            print("unsigned")
        else:
            print(
                f"signed: {sig.algorithm}, key id {sig.key_id}"
                + (" (verified against a trusted key)" if sig.verified else " (not verified: no --trusted-key given)")
            )
        rows = []
        for m in manifest.modules:
            rows.append(
                [
                    m.index,
                    "-" if m.parent is None else m.parent,
                    m.kind,
                    m.fmt or "-",
                    m.shape,
                    _common.human_size(m.size),
                    m.sha256[:16],
                    ", ".join(m.sources) or "-",
                ]
            )
        print(_common.table(["#", "parent", "kind", "fmt", "shape", "size", "sha256", "sources"], rows))
        print()
        print(
            _common.table(
                ["#", "kind", "function"],
                [
                    [m.index, m.kind, f.signature or f"{f.name} (signature not recorded)"]
                    for m in manifest.modules
                    for f in m.functions
                ],
            )
        )
    if FLAGS.sources or FLAGS.format is not None:
        shown = 0
        for m in manifest.modules:
            for fmt, text in m.sources.items():
                if FLAGS.format is not None and fmt != FLAGS.format:
                    continue
                shown += 1
                print(f"\n==== module {m.index} ({m.kind}), source format {fmt} ====")
                sys.stdout.write(text if text.endswith("\n") else text + "\n")
        if FLAGS.format is not None and not shown:
            held = sorted({f for m in manifest.modules for f in m.sources})
            return _common.fail(
                f"no source of format '{FLAGS.format}' in {argv[0]}; it holds: {', '.join(held) or 'none'}"
            )
    return 0
