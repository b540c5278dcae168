"""Load-time configuration of a plugin (plugin ABI 1.1, docs/C_ABI.md): what
the loader passes down is what the plugin reads while it registers, and only
then; the way a runtime DSO is configured without calling back into Python."""

from __future__ import annotations

from pathlib import Path

import modrt_testing

PLUGIN = Path("tests/plugins/load_options_plugin.so").resolve()


def run(load: str) -> str:
    """Loads the plugin in a fresh interpreter with `load` (a Python call) and
    prints what it read, and what asking after registration gives."""
    code = f"""
import modrt
from modrt import backend, sdk
{load}
print("greeting:", sdk.get_global_func("testing.load_options.greeting")())
try:
    sdk.get_global_func("testing.load_options.read_late")()
except RuntimeError as e:
    print("late:", e)
"""
    proc = modrt_testing.run_python(code, env={"MODRT_DEVICE_BACKEND_AUTOLOAD": "0"})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_plugin_reads_the_options_it_was_loaded_with():
    out = run(f"backend.load_plugin({str(PLUGIN)!r}, {{'greeting': 'hello', 'other': 'x'}})")
    assert "greeting: hello\n" in out


def test_an_option_not_given_reads_as_none():
    assert "greeting: None\n" in run(f"backend.load_plugin({str(PLUGIN)!r}, {{'other': 'x'}})")
    assert "greeting: None\n" in run(f"backend.load_plugin({str(PLUGIN)!r})")


def test_options_are_answered_only_while_the_plugin_registers():
    out = run(f"backend.load_plugin({str(PLUGIN)!r}, {{'greeting': 'hello'}})")
    assert "late: load_option is answered only while a plugin registers" in out


def test_a_file_already_loaded_keeps_its_first_options():
    out = run(
        f"backend.load_plugin({str(PLUGIN)!r}, {{'greeting': 'first'}})\n"
        f"backend.load_plugin({str(PLUGIN)!r}, {{'greeting': 'second'}})"
    )
    assert "greeting: first\n" in out


def test_options_must_be_strings():
    out = run(
        "try:\n"
        f"    backend.load_plugin({str(PLUGIN)!r}, {{'greeting': 3}})\n"
        "except TypeError as e:\n"
        "    print('refused:', e)\n"
        f"backend.load_plugin({str(PLUGIN)!r}, {{'greeting': 'then'}})"
    )
    assert "refused: load options are strings: 'greeting': 3" in out
    assert "greeting: then\n" in out
