"""Runs a user's Python script (or `-c CODE`) with modrt importable."""

import os
import runpy
import sys


def main() -> None:
    # `bazel run` starts us in the runfiles tree; the user's paths are relative
    # to where they typed the command.
    cwd = os.environ.get("BUILD_WORKING_DIRECTORY")
    if cwd:
        os.chdir(cwd)
    argv = sys.argv[1:]
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: tools/bazel run //tools:python -- SCRIPT.py [ARGS...] | -c CODE [ARGS...]")
        sys.exit(0 if argv else 2)
    if argv[0] == "-c":
        if len(argv) < 2:
            sys.exit("tools:python: -c needs an argument")
        sys.argv = ["-c"] + argv[2:]
        exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        return
    script = argv[0]
    if not os.path.isfile(script):
        sys.exit(f"tools:python: no such script: {script}")
    sys.argv = argv
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
