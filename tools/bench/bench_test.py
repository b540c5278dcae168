"""The bench tool's pieces work: a smoke run of one row, interleaving, verdicts.
No timing is asserted: the figures only have to be real numbers."""

import json
import sys

import bench
import measure
import report


def test_smoke_run_of_the_ffi_call_row_writes_the_doc(tmp_path):
    paths = [p for p in sys.path if ".runfiles" in p]
    code = bench.main(
        ["ffi-call", "--python", sys.executable, "--no-install", "--reps", "2", "--out", str(tmp_path)]
        + [f"--modrt-path={p}" for p in paths]
    )
    assert code == 0
    doc = (tmp_path / "BENCHMARKS.md").read_text()
    row = next(line for line in doc.splitlines() if line.startswith("| ffi-call |"))
    assert 'modrt.get_global_func("testing.nop")()' in row and "worker.py modrt-nop" in row and "tvm_ffi" in row
    results = json.loads((tmp_path / "benchmarks.json").read_text())
    (line,) = results["lines"]
    assert line["modrt"] > 0 and len(line["samples"]["modrt"]) == 2
    if "tvm_ffi" in line["samples"]:  # the peer is importable in this interpreter
        assert line["ratio"] > 0
    else:
        assert line["verdict"].startswith("peer unavailable") and line["ratio"] is None


def test_sides_take_turns_and_ratios_are_paired():
    order = []
    values = {"a": iter([2.0, 4.0, 6.0]), "b": iter([1.0, 1.0, 2.0])}

    def sampler(label):
        def sample():
            order.append(label)
            return next(values[label])

        return sample

    samples = measure.interleave([measure.Side("a", "", sampler("a")), measure.Side("b", "", sampler("b"))], 3)
    assert order == ["a", "b", "b", "a", "a", "b"]
    assert samples == {"a": [2.0, 4.0, 6.0], "b": [1.0, 1.0, 2.0]}
    assert measure.paired_ratio(samples["a"], samples["b"]) == 3.0
    assert measure.paired_difference(samples["a"], samples["b"]) == 3.0


def test_verdicts_say_met_or_by_how_much_it_misses():
    met = report.Line(id="x", what="", command="", unit="ns", modrt=90.0, ratio=0.9, limit=1.0).judge()
    assert met.verdict == "met"
    missed = report.Line(id="x", what="", command="", unit="ns", modrt=1.0, ratio=1.3, limit=1.0).judge()
    assert missed.verdict == "missed: 1.30x, 30% over the bound"
    absolute = report.Line(id="x", what="", command="", unit="ms", modrt=7.5, limit=5.0, metric="value").judge()
    assert absolute.verdict == "missed: 7.5 ms, 50% over the bound"
    assert report.Line(id="x", what="", command="", unit="ms", modrt=1.0).judge().verdict == "reported (no target)"


def test_execution_log_spawns_are_read_in_order(tmp_path):
    log = tmp_path / "exec.json"
    dso = {"path": "bazel-out/k8-fastbuild/bin/backends/opencl/libmodrt_runtime_opencl.so"}
    log.write_text(
        json.dumps({"targetLabel": "//backends/opencl:libmodrt_runtime_opencl.so", "mnemonic": "CppCompile"}, indent=1)
        + "\n"
        + json.dumps({"targetLabel": "@//backends/opencl:libmodrt_runtime_opencl.so", "mnemonic": "CppLink"})
        + json.dumps({"targetLabel": "//python:wheel", "mnemonic": "ModrtWheel", "inputs": [dso]})
        + json.dumps({"targetLabel": "//core:libmodrt_runtime.so", "mnemonic": "CppLink", "inputs": []})
    )
    assert bench._executed_spawns(log) == [
        ("//backends/opencl:libmodrt_runtime_opencl.so", "CppCompile", False),
        ("//backends/opencl:libmodrt_runtime_opencl.so", "CppLink", False),
        ("//python:wheel", "ModrtWheel", True),
        ("//core:libmodrt_runtime.so", "CppLink", False),
    ]
