"""Writes a wheel (PEP 427): the given files, METADATA, WHEEL, entry points, RECORD."""

from __future__ import annotations

import argparse
import base64
import hashlib
import zipfile

# Fixed timestamps: the same inputs give the same wheel bytes.
EPOCH = (1980, 1, 1, 0, 0, 0)


def record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--tag", required=True)
    p.add_argument("--summary", default="")
    p.add_argument("--python_requires", default="")
    p.add_argument("--requires", action="append", default=[])
    p.add_argument("--console_script", action="append", default=[])
    p.add_argument("--file", action="append", default=[], help="PATH_IN_WHEEL=SOURCE")
    a = p.parse_args()

    dist_info = f"{a.name}-{a.version}.dist-info"
    entries: dict[str, bytes] = {}
    for spec in a.file:
        dest, _, src = spec.partition("=")
        with open(src, "rb") as f:
            entries[dest] = f.read()
    metadata = [f"Metadata-Version: 2.1", f"Name: {a.name}", f"Version: {a.version}"]
    if a.summary:
        metadata.append(f"Summary: {a.summary}")
    if a.python_requires:
        metadata.append(f"Requires-Python: {a.python_requires}")
    metadata += [f"Requires-Dist: {r}" for r in a.requires]
    entries[f"{dist_info}/METADATA"] = ("\n".join(metadata) + "\n").encode()
    entries[f"{dist_info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: modrt build_wheel\nRoot-Is-Purelib: false\nTag: {a.tag}\n"
    ).encode()
    if a.console_script:
        lines = ["[console_scripts]"] + [s.replace("=", " = ", 1) for s in a.console_script]
        entries[f"{dist_info}/entry_points.txt"] = ("\n".join(lines) + "\n").encode()
    record = [f"{path},{record_hash(data)},{len(data)}" for path, data in sorted(entries.items())]
    record.append(f"{dist_info}/RECORD,,")
    entries[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()

    with zipfile.ZipFile(a.out, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in entries.items():
            info = zipfile.ZipInfo(path, EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            # Shared objects must stay executable-readable after unpacking.
            info.external_attr = (0o755 if path.endswith(".so") else 0o644) << 16
            z.writestr(info, data)


if __name__ == "__main__":
    main()
