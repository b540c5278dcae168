"""`tools/bazel run //tools:modrt -- <command>`: the modrt command line."""

import modrt_cli

if __name__ == "__main__":
    modrt_cli.run()
