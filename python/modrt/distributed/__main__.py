"""`python -m modrt.distributed resources [--workers-per-device N]`: the Ray
custom resources of this node's modrt devices, as JSON for
`ray start --resources=...` (docs/DISTRIBUTED.md)."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m modrt.distributed")
    commands = parser.add_subparsers(dest="command", required=True)
    resources = commands.add_parser("resources", help="print this node's modrt devices as Ray resources (JSON)")
    resources.add_argument("--workers-per-device", type=int, default=1, help="workers that may share one device")
    args = parser.parse_args(argv)
    from ._cluster import node_resources

    print(json.dumps(node_resources(args.workers_per_device), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
