"""Each backend is one record (modrt.backend.Backend) that compile, target
detection and the source checks read: what an in-tree hook and an
out-of-tree backend register, and what a user sees of it."""

from __future__ import annotations

import pytest

import modrt
import modrt.backend
from modrt import _registry, _selection
from modrt.backend import Backend, Reflector


class Reached(Exception):
    """Raised by a test codegen driver: compile got that far."""


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records registered by a test are gone after it."""
    monkeypatch.setattr(_registry, "_records", dict(_registry._records))


def test_every_in_tree_backend_has_one_record_with_its_identity():
    for name in _selection.RUNTIMES:
        record = modrt.backend.record(name)
        assert record is not None, name
        assert record.codegen is not None and record.detect is not None, name
        assert record.identity == _selection.IDENTITIES[name]
    assert modrt.backend.record("cpu").detect is not None


def test_a_record_is_frozen_and_replace_makes_a_new_one():
    record = modrt.backend.record("opencl")
    with pytest.raises(AttributeError, match="frozen"):
        record.codegen = None
    changed = record.replace(check=None)
    assert changed.check is None and record.check is not None
    assert changed.codegen is record.codegen


def test_a_record_refuses_what_it_cannot_call():
    with pytest.raises(TypeError, match="codegen must be callable"):
        Backend("broken", codegen="not a function")
    with pytest.raises(ValueError, match="needs a name"):
        Backend("")


@pytest.mark.usefixtures("registry")
def test_compile_runs_the_records_check_then_its_codegen():
    calls = []

    def check(source, functions, filename):
        calls.append(("check", filename))

    def codegen(source, functions, target):
        calls.append(("codegen", target.kind))
        raise Reached

    modrt.backend.register(Backend("record_test", codegen=codegen, check=check))
    with pytest.raises(Reached):
        modrt.compile("source", "record_test", ["k(float32*)"], filename="k.src")
    assert calls == [("check", "k.src"), ("codegen", "record_test")]
    calls.clear()
    with pytest.raises(Reached):
        modrt.compile("source", "record_test", ["k(float32*)"], validate=False)
    assert calls == [("codegen", "record_test")]


@pytest.mark.usefixtures("registry")
def test_the_keyword_form_fills_the_same_record():
    """What out-of-tree backends wrote before the record: a reflector's
    capabilities as attributes, compiler options as the driver's."""

    def reflect(source):
        return ["k(float32* a)"]

    def codegen(source, functions, target):
        raise Reached

    reflect.buffer_fits = lambda dtype, source, index: dtype == "uint8"
    codegen.takes_compiler_options = True
    modrt.backend.register("keyword_test", codegen=codegen, reflect=reflect)
    modrt.target.register_device_target_detector("keyword_test", lambda dev: modrt.target.Target("keyword_test"))
    record = modrt.backend.record("keyword_test")
    assert isinstance(record.reflector, Reflector)
    assert record.reflector.read is reflect and record.reflector.buffer_fits("uint8", "", 0)
    assert record.takes_compiler_options and record.detect is not None
    # The reflector's rule is used: a uint8 buffer fits the kernel's float32 one.
    with pytest.raises(Reached):
        modrt.compile("source", "keyword_test", ["k(uint8* a)"], options=["-O2"])
    with pytest.raises(modrt.SignatureError, match="int32"):
        modrt.compile("source", "keyword_test", ["k(int32* a)"])


def test_unknown_targets_name_the_registered_ones():
    with pytest.raises(ValueError, match="known targets: cpu, .*opencl"):
        modrt.compile("source", "no_such_target", ["k(float32*)"])
    with pytest.raises(ValueError, match="supported: .*cpu"):
        modrt.target.detect_target_from_device("no_such_target")


def test_every_in_tree_record_names_its_language_and_demo_kernel():
    # What messages and `modrt demo` read from the record, nowhere else
    # (hexagon compiles C: its messages say "hexagon").
    for name in modrt.backend.in_tree():
        record = modrt.backend.record(name)
        source, signature = record.demo
        assert source and signature.startswith("vadd(float32*, float32*, float32*, int32"), name
        assert name == "hexagon" or record.language, name
    assert _registry.language_of("opencl") == "OpenCL C"
    assert _registry.language_of("hexagon") == "hexagon"
    assert _registry.language_of("no_such_backend") == "no_such_backend"


@pytest.mark.usefixtures("registry")
def test_a_records_language_names_its_source_in_compile_errors():
    def codegen(source, functions, target):
        raise modrt.CompileError("record_test", ["k"], "k.src", "tool", "k.src:1: error: nope")

    modrt.backend.register(Backend("record_test", codegen=codegen, language="Record C"))
    with pytest.raises(modrt.CompileError, match=r"^Record C of k \(k\.src\) does not compile"):
        modrt.compile("source", "record_test", ["k(float32*)"])
