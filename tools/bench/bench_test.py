"""The bench tool's pieces work: a smoke run of one row, fresh processes per
sample, interleaving, repeats and their verdicts, the floors. No timing is
asserted: the figures only have to be real numbers."""

import json
import os
import sys

import bench
import context
import measure
import process_rows
import pytest
import report


def test_smoke_run_of_the_ffi_call_row_writes_the_doc(tmp_path):
    paths = [p for p in sys.path if ".runfiles" in p]
    code = bench.main(
        [
            "ffi-call",
            "--python",
            sys.executable,
            "--no-install",
            "--reps",
            "2",
            "--repeats",
            "2",
            "--out",
            str(tmp_path),
        ]
        + [f"--modrt-path={p}" for p in paths]
    )
    assert code == 0
    doc = (tmp_path / "BENCHMARKS.md").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("| ffi-call |")]
    assert len(rows) == 2  # against the floor and against tvm_ffi
    assert all('modrt.get_global_func("testing.nop")()' in r and "worker.py modrt-nop" in r for r in rows)
    assert "nop_ext.nop()" in rows[0] and "tvm_ffi" in rows[1]
    results = json.loads((tmp_path / "benchmarks.json").read_text())
    floor, peer = results["lines"]
    assert floor["modrt"] > 0 and len(floor["samples"]["modrt"]) == 4  # 2 repeats x 2 rounds
    assert floor["ratio"] > 0 and len(floor["repeat_figures"]) == 2  # the floor is built by the bench
    assert set(floor["spreads"]) == {"modrt", "floor", "ratio"}
    if "tvm_ffi" in peer["samples"]:  # the peer is importable in this interpreter
        assert peer["ratio"] > 0
    else:
        assert peer["verdict"].startswith("tvm_ffi unavailable") and peer["ratio"] is None


def test_render_rewrites_the_doc_from_the_recorded_run(tmp_path):
    line = report.Line(
        id="x",
        what="a row",
        command="c",
        unit="ns",
        modrt=1.0,
        ref="peer",
        peer="peer: `p`",
        peer_value=2.0,
        ratio=0.5,
        limit=1.0,
        repeat_figures=[0.5, 0.5],
    ).judge()
    report.dump(tmp_path / "benchmarks.json", [line], {"date": "then"})
    assert bench.main(["--render", "--out", str(tmp_path)]) == 0
    doc = (tmp_path / "BENCHMARKS.md").read_text()
    assert "- date: then" in doc and "| x | a row: `c` | 1.00 ns |" in doc and "| 0.50x |" in doc


def test_every_sample_is_a_fresh_process():
    sample = measure.fresh_worker(sys.executable, "testing-pid", measure.python_env(), n=1, scale=1.0)
    pids = {sample() for _ in range(3)}
    assert len(pids) == 3 and float(os.getpid()) not in pids


def test_a_case_that_cannot_run_says_why():
    env = measure.python_env(extra={"MODRT_BENCH_FLOORS": ""})
    assert "MODRT_BENCH_FLOORS" in measure.probe(sys.executable, "floor-nop", env)
    assert measure.probe(sys.executable, "testing-pid", env) is None


def test_c_floors_report_a_figure_or_why_not(tmp_path):
    ok, absent = tmp_path / "ok.sh", tmp_path / "absent.sh"
    ok.write_text('#!/bin/sh\necho "setting up"\necho "$1 $2 $3" >&2\necho 0.5\n')
    absent.write_text('#!/bin/sh\necho "unavailable: no such device"\nexit 3\n')
    for script in (ok, absent):
        script.chmod(0o755)
    assert measure.c_floor([str(ok), "x"], n=10, scale=1e6)() == 0.5e6
    with pytest.raises(measure.Unavailable, match="no such device"):
        measure.c_floor([str(absent)], n=10, scale=1.0)()


def test_the_bench_builds_the_python_floor(tmp_path):
    floors = context.build_floors(sys.executable, tmp_path)
    assert "nop_ext" not in floors.missing, floors.missing
    env = measure.python_env(extra={"MODRT_BENCH_FLOORS": str(tmp_path)})
    sample = measure.fresh_worker(sys.executable, "floor-nop", env, n=1000, scale=1e9)
    assert sample() > 0
    with pytest.raises(measure.Unavailable, match="was not built"):
        context.Floors(tmp_path, {"opencl_launch": "no cc"}).path("opencl_launch")


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


def line(runs, limit=1.0, **kw):
    return report.Line.from_runs(runs, ref="peer", id="x", what="", command="", unit="ns", limit=limit, **kw).judge()


def test_repeats_pool_into_medians_with_spreads():
    runs = [{"modrt": [1.0, 2.0, 3.0], "peer": [2.0, 4.0, 6.0]}, {"modrt": [1.0, 1.0, 1.0], "peer": [2.0, 2.0, 2.0]}]
    ln = line(runs)
    assert ln.ratio == 0.5 and ln.repeat_figures == [0.5, 0.5]
    assert ln.modrt == 1.0 and ln.peer_value == 2.0
    assert ln.spreads["modrt"]["min"] == 1.0 and ln.spreads["modrt"]["max"] == 3.0
    assert ln.verdict == "met"


def test_repeats_that_disagree_are_unstable_never_met():
    runs = [{"modrt": [1.0], "peer": [2.0]}, {"modrt": [1.0], "peer": [1.6]}, {"modrt": [1.0], "peer": [2.0]}]
    ln = line(runs)  # ratios 0.5, 0.625, 0.5: 25% apart
    assert ln.verdict.startswith("unstable (repeats disagree by 25%") and "within the bound" in ln.verdict
    close = [{"modrt": [1.0], "peer": [2.0]}, {"modrt": [1.0], "peer": [1.8]}]  # 11% apart
    assert line(close).verdict == "met"
    assert line(close, limit=0.5).verdict == "missed: 0.53x, 6% over the bound"
    assert line(runs, limit=None).verdict.startswith("reported; unstable")


def test_a_bounded_difference_is_unstable_when_its_repeats_straddle_the_bound():
    def diff(values_a, values_b):
        runs = [{"a": [x], "b": [y]} for x, y in zip(values_a, values_b)]
        return report.Line.from_differences(runs, "a", "b", id="x", what="", command="", unit="ms", limit=5.0).judge()

    assert diff([3.0, 4.0, 2.0], [0.0, 0.0, 0.0]).verdict == "met"
    assert diff([3.0, 9.0, 2.0], [0.0, 0.0, 0.0]).verdict.startswith("unstable (repeats fall on both sides")
    assert diff([7.0, 9.0, 8.0], [0.0, 0.0, 0.0]).verdict == "missed: 8.0 ms, 60% over the bound"


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
    assert process_rows._executed_spawns(log) == [
        ("//backends/opencl:libmodrt_runtime_opencl.so", "CppCompile", False),
        ("//backends/opencl:libmodrt_runtime_opencl.so", "CppLink", False),
        ("//python:wheel", "ModrtWheel", True),
        ("//core:libmodrt_runtime.so", "CppLink", False),
    ]
