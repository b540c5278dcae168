"""The `modrt` command line: info, compile, inspect, run, demo, doctor, keygen, sign.

    modrt <command> [flags] [args]        modrt <command> --help

A package of its own, beside `modrt`, so that a command can choose how modrt
is imported (`inspect` loads no backend runtime) before importing it.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

# command -> (module, one-line summary)
COMMANDS = {
    "info": ("modrt_cli.info", "backends: selected, DSO found, loaded, driver found, devices, target, why not"),
    "compile": ("modrt_cli.compile", "kernel source + signatures -> .modrt artifact for a target"),
    "inspect": ("modrt_cli.inspect", "manifest and sources of a .modrt file (no runtime needed)"),
    "run": ("modrt_cli.run", "load a .modrt and run one function on given inputs"),
    "demo": ("modrt_cli.demo", "compile, export, reload and check one kernel on every backend"),
    "doctor": ("modrt_cli.doctor", "check every DSO modrt would load against the SHA-256 recorded at build/install"),
    "keygen": ("modrt_cli.keygen", "make an Ed25519 key pair for signing artifacts"),
    "sign": ("modrt_cli.sign", "sign a .modrt file (a detached Ed25519 signature over its manifest)"),
}


def overview() -> str:
    lines = ["usage: modrt <command> [flags] [args]", "", "commands:"]
    lines += [f"  {name:8s} {summary}" for name, (_, summary) in COMMANDS.items()]
    lines += ["", "`modrt <command> --help` describes a command and its flags."]
    return "\n".join(lines)


def run(argv: Sequence[str] | None = None) -> None:
    """Entry point of the `modrt` script and of `bazel run //tools:modrt`."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(overview())
        sys.exit(0 if args else 2)
    name = args[0]
    if name not in COMMANDS:
        print(f"modrt: unknown command '{name}'\n\n{overview()}", file=sys.stderr)
        sys.exit(2)
    # `bazel run` starts us in the runfiles tree; paths are relative to where
    # the command was typed.
    cwd = os.environ.get("BUILD_WORKING_DIRECTORY")
    if cwd:
        os.chdir(cwd)
    module = importlib.import_module(COMMANDS[name][0])
    from absl import app

    from . import _flags

    prog = f"modrt {name}"
    sys.argv[0] = prog
    _flags.MAIN_MODULE = prog
    module.define_flags()
    # absl's --help prints __main__'s docstring and the flags of the main module.
    sys.modules["__main__"].__doc__ = module.__doc__
    own_args = args[1 : args.index("--")] if "--" in args else args[1:]
    # absl spells a negated boolean --noX; --no-X (and --no-x_y as --no-x-y) is accepted too.
    for i, arg in enumerate(own_args):
        name = arg[5:].replace("-", "_")
        if arg.startswith("--no-") and name in _flags.FLAGS and _flags.FLAGS[name].boolean:
            own_args[i] = args[i + 1] = f"--no{name}"
    if "--help" in own_args or "-h" in own_args:
        # absl exits 1 after --help; asking for help is not an error.
        app.usage(shorthelp=True, writeto_stdout=True, exitcode=0)
    app.run(lambda parsed: module.main(parsed[1:]), argv=[prog] + args[1:])
