"""Flag definitions for the current command, listed by its `--help`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from absl import flags

# Set by modrt_cli.run() to "modrt <command>" (also sys.argv[0]): absl's --help
# lists the flags of the module named like sys.argv[0].
MAIN_MODULE = "modrt"


def define(kind: Callable[..., Any], name: str, default: Any, help: str, **kwargs: Any) -> Any:
    """flags.DEFINE_<kind>, registered under the current command."""
    return kind(name, default, help, module_name=MAIN_MODULE, **kwargs)


FLAGS = flags.FLAGS
