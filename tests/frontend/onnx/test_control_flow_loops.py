"""Loop and Scan run by the VM (`vm.builtin.loop` calling the body function): run-time trip
counts and conditions, carried values that grow, scan outputs, nesting with If, deep trip
counts and bad trip counts, all against onnx.reference (or ONNX Runtime where the reference
cannot run the case)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_testing import check_model, make_model, rand, run_graphc

import graphc
from graphc import relax
from graphc.errors import FrontendError
from graphc.frontend.onnx import from_onnx

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def info(name, dtype, shape):
    return helper.make_tensor_value_info(name, dtype, shape)


def _body(nodes, carried, scans=(), extra_inputs=()):
    """A Loop body: (i, cond_in, *carried) -> (cond_out, *carried_out, *scans)."""
    inputs = [info("i", I64, []), info("cond_in", B, [])] + [info(n, F, s) for n, s in carried]
    outputs = [info("cond_out", B, [])]
    outputs += [info(n + "_out", F, [f"{n}_d{k}" for k in range(len(s))]) for n, s in carried]
    outputs += [info(n, F, [f"{n}_d{k}" for k in range(r)]) for n, r in scans]
    return helper.make_graph(nodes, "body", inputs, outputs)


def _accumulate_body():
    """acc += x * i; the scan output is acc after each iteration."""
    return _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["i"], ["i_f"], to=F),
            helper.make_node("Mul", ["x", "i_f"], ["xi"]),
            helper.make_node("Add", ["acc", "xi"], ["acc_out"]),
            helper.make_node("Identity", ["acc_out"], ["seen"]),
        ],
        [("acc", [2])],
        [("seen", 1)],
    )


def _for_loop_model(m_shape=()):
    node = helper.make_node("Loop", ["M", "cond", "acc0"], ["acc", "seen"], body=_accumulate_body(), name="L")
    return make_model(
        [node],
        [("M", np.int64, list(m_shape)), ("cond", np.bool_, []), ("acc0", None, [2]), ("x", None, [2])],
        [("acc", F, [2]), ("seen", F, ["T", 2])],
    )


@pytest.mark.parametrize("trips", [1, 5, 40])
def test_for_loop_with_a_run_time_trip_count(trips):
    check_model(_for_loop_model(), [np.array(trips, "int64"), np.array(True), rand(2), rand(2, seed=1)])


def test_the_loop_is_a_body_function_and_a_vm_loop():
    mod = from_onnx(_for_loop_model())
    text = mod.script()
    assert 'R.call_pure_packed("vm.builtin.loop", cls.L_body' in text
    assert "def L_body(iteration" in text
    assert relax.analysis.well_formed(mod)


def test_a_loop_of_no_iteration_returns_its_initial_values_and_empty_scans():
    acc0, x = rand(2), rand(2, seed=1)
    acc, seen = run_graphc(_for_loop_model(), [np.array(0, "int64"), np.array(True), acc0, x])
    np.testing.assert_array_equal(acc, acc0)
    assert seen.shape == (0, 2) and seen.dtype == np.float32


def test_ten_thousand_iterations_run_without_recursion():
    n = 10_000
    acc, seen = run_graphc(
        _for_loop_model(),
        [np.array(n, "int64"), np.array(True), np.zeros(2, "float32"), np.array([1.0, 0.5], "float32")],
    )
    total = n * (n - 1) / 2
    np.testing.assert_allclose(acc, [total, total / 2], rtol=1e-3)  # float32 sums
    assert seen.shape == (n, 2)
    np.testing.assert_allclose(seen[9], [45.0, 22.5])


def test_while_loop_with_a_run_time_condition():
    """Doubles acc while its sum is below a limit given at run time (no trip count)."""
    body = _body(
        [
            helper.make_node("Add", ["acc", "acc"], ["acc_out"]),
            helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "limit"], ["cond_out"]),
        ],
        [("acc", [3])],
    )
    node = helper.make_node("Loop", ["", "go", "acc0"], ["acc"], body=body)
    model = make_model(
        [node], [("go", np.bool_, []), ("acc0", None, [3]), ("limit", None, [])], [("acc", F, [3])]
    )
    acc0 = np.array([0.5, 1.0, 0.25], "float32")
    for limit in (1.0, 100.0, 5000.0):
        check_model(model, [np.array(True), acc0, np.array(limit, "float32")])
    check_model(model, [np.array(False), acc0, np.array(10.0, "float32")])


def test_trip_count_and_condition_both_at_run_time():
    """Stops at M or when the condition (computed in the body) turns false, whichever first."""
    body = _body(
        [
            helper.make_node("Add", ["acc", "one"], ["acc_out"]),
            helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "limit"], ["cond_out"]),
            helper.make_node("Identity", ["acc_out"], ["seen"]),
        ],
        [("acc", [2])],
        [("seen", 1)],
    )
    one = helper.make_node("Constant", [], ["one"], value=helper.make_tensor("c", F, [], [1.0]))
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc", "seen"], body=body)
    model = make_model(
        [one, node],
        [("M", np.int64, []), ("go", np.bool_, []), ("acc0", None, [2]), ("limit", None, [])],
        [("acc", F, [2]), ("seen", F, ["T", 2])],
    )
    for m, limit in ((3, 100.0), (50, 9.0)):
        check_model(
            model, [np.array(m, "int64"), np.array(True), np.zeros(2, "float32"), np.array(limit, "float32")]
        )


def test_loop_carried_value_that_grows():
    """v = Concat(v, x) each iteration: the carried value's length changes with every trip."""
    body = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Concat", ["v", "x"], ["v_out"], axis=0),
            helper.make_node("ReduceSum", ["v_out"], ["s"], keepdims=1),
        ],
        [("v", ["n"])],
        [("s", 1)],
    )
    node = helper.make_node("Loop", ["M", "go", "v0"], ["v", "sums"], body=body)
    model = make_model(
        [node],
        [("M", np.int64, []), ("go", np.bool_, []), ("v0", None, [1]), ("x", None, [2])],
        [("v", F, ["k"]), ("sums", F, ["T", 1])],
    )
    for m in (1, 4):
        check_model(model, [np.array(m, "int64"), np.array(True), rand(1), rand(2, seed=1)])
    # onnx.reference cannot stack no scan output
    v, sums = run_graphc(model, [np.array(0, "int64"), np.array(True), rand(1), rand(2, seed=1)])
    assert v.shape == (1,) and sums.shape == (0, 1)


def test_a_constant_trip_count_past_the_unroll_limit_runs_in_the_vm():
    from graphc.frontend.onnx.control_flow import UNROLL_LIMIT

    trips = UNROLL_LIMIT * 8
    node = helper.make_node("Loop", ["M", "cond", "acc0"], ["acc", "seen"], body=_accumulate_body())
    m = helper.make_node("Constant", [], ["M"], value=helper.make_tensor("m", I64, [], [trips]))
    model = make_model(
        [m, node],
        [("cond", np.bool_, []), ("acc0", None, [2]), ("x", None, [2])],
        [("acc", F, [2]), ("seen", F, [trips, 2])],
    )
    assert "vm.builtin.loop" in from_onnx(model).script()
    check_model(model, [np.array(True), rand(2), rand(2, seed=1)])


def test_body_reads_outer_values_and_outer_symbolic_sizes():
    """The body reads `x` (n elements) and `n` itself (Shape(x), folded to a symbolic size):
    the size reaches the body function through its shape parameter."""
    body = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Cast", ["size"], ["size_f"], to=F),
            helper.make_node("Add", ["acc", "size_f"], ["acc_out"]),
        ],
        [("acc", [1])],
    )
    shape = helper.make_node("Shape", ["x"], ["size"])
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc"], body=body)
    model = make_model(
        [shape, node],
        [("M", np.int64, []), ("go", np.bool_, []), ("acc0", None, [1]), ("x", None, ["n"])],
        [("acc", F, [1])],
    )
    assert "outer_sizes" in from_onnx(model).script()
    for n in (2, 7):
        check_model(model, [np.array(3, "int64"), np.array(True), rand(1), rand(n)])


def test_if_inside_a_loop():
    """Each iteration adds x or subtracts it, by the parity of the iteration number."""
    then = helper.make_graph([helper.make_node("Add", ["acc", "x"], ["t"])], "then", [], [info("t", F, [2])])
    other = helper.make_graph([helper.make_node("Sub", ["acc", "x"], ["e"])], "else", [], [info("e", F, [2])])
    body = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Mod", ["i", "two"], ["parity"]),
            helper.make_node("Equal", ["parity", "zero"], ["even"]),
            helper.make_node("If", ["even"], ["acc_out"], then_branch=then, else_branch=other),
        ],
        [("acc", [2])],
    )
    consts = [
        helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two", I64, [], [2])),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero", I64, [], [0])),
    ]
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc"], body=body)
    model = make_model(
        consts + [node],
        [("M", np.int64, []), ("go", np.bool_, []), ("acc0", None, [2]), ("x", None, [2])],
        [("acc", F, [2])],
    )
    for m in (0, 3, 6):
        check_model(model, [np.array(m, "int64"), np.array(True), rand(2), rand(2, seed=1)])


def test_loop_inside_an_if():
    loop = helper.make_node("Loop", ["M", "cond", "acc0"], ["acc_l", "seen_l"], body=_accumulate_body())
    then = helper.make_graph(
        [loop, helper.make_node("Identity", ["acc_l"], ["t"])], "then", [], [info("t", F, [2])]
    )
    other = helper.make_graph([helper.make_node("Neg", ["acc0"], ["e"])], "else", [], [info("e", F, [2])])
    node = helper.make_node("If", ["pick"], ["y"], then_branch=then, else_branch=other)
    model = make_model(
        [node],
        [
            ("pick", np.bool_, []),
            ("M", np.int64, []),
            ("cond", np.bool_, []),
            ("acc0", None, [2]),
            ("x", None, [2]),
        ],
        [("y", F, [2])],
    )
    for pick in (True, False):
        check_model(model, [np.array(pick), np.array(4, "int64"), np.array(True), rand(2), rand(2, seed=1)])


def test_nested_loops():
    """The inner loop's trip count is the outer iteration number."""
    inner = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["a", "x"], ["a_out"])],
        "inner",
        [info("j", I64, []), info("c_in", B, []), info("a", F, [2])],
        [info("c_out", B, []), info("a_out", F, [2])],
    )
    outer = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Loop", ["i", "cond_in", "acc"], ["acc_out"], body=inner),
        ],
        [("acc", [2])],
    )
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc"], body=outer)
    model = make_model(
        [node],
        [("M", np.int64, []), ("go", np.bool_, []), ("acc0", None, [2]), ("x", None, [2])],
        [("acc", F, [2])],
    )
    check_model(model, [np.array(5, "int64"), np.array(True), rand(2), rand(2, seed=1)])


def _scan_model(directions=(0,), out_axis=0):
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
            helper.make_node("Mul", ["s_out", "x_t"], ["y_t"]),
        ],
        "body",
        [info("s_in", F, [3]), info("x_t", F, [3])],
        [info("s_out", F, [3]), info("y_t", F, [3])],
    )
    node = helper.make_node(
        "Scan",
        ["s0", "xs"],
        ["s", "ys"],
        body=body,
        num_scan_inputs=1,
        scan_input_directions=list(directions),
        scan_output_axes=[out_axis],
    )
    ys_shape = ["T", 3] if out_axis == 0 else [3, "T"]
    return make_model(
        [node], [("s0", None, [3]), ("xs", None, ["T", 3])], [("s", F, [3]), ("ys", F, ys_shape)]
    )


@pytest.mark.parametrize("length", [1, 6, 30])
def test_scan_over_a_run_time_length(length):
    check_model(_scan_model(), [rand(3), rand(length, 3, seed=1)])


def test_scan_backwards_with_the_outputs_on_axis_1():
    """onnx.reference scans forwards only: ONNX Runtime is the reference here."""
    pytest.importorskip("onnxruntime")
    check_model(_scan_model((1,), 1), [rand(3), rand(5, 3, seed=1)], reference="ort")


def test_scan_opset_8_with_a_batch_axis():
    body = helper.make_graph(
        [
            helper.make_node("Add", ["s_in", "x_t"], ["s_out"]),
            helper.make_node("Identity", ["s_out"], ["y_t"]),
        ],
        "body",
        [info("s_in", F, [2]), info("x_t", F, [2])],
        [info("s_out", F, [2]), info("y_t", F, [2])],
    )
    node = helper.make_node("Scan", ["", "s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1)
    model = make_model(
        [node],
        [("s0", None, [2, 2]), ("xs", None, [2, 4, 2])],
        [("s", F, [2, 2]), ("ys", F, [2, 4, 2])],
        opset=8,
    )
    s0, xs = rand(2, 2), rand(2, 4, 2, seed=1)
    expected = [s0 + xs.sum(axis=1), s0[:, None, :] + np.cumsum(xs, axis=1)]
    check_model(model, [s0, xs], expected=expected)


def test_the_executable_with_a_loop_saves_and_loads(tmp_path):
    exe = graphc.compile(from_onnx(_for_loop_model()), "llvm")
    path = str(tmp_path / "loop.gvm")
    exe.export_library(path)
    vm = relax.VirtualMachine(graphc.vm.Executable.load(path), graphc.cpu())
    acc0, x = rand(2), rand(2, seed=1)
    acc, seen = vm["main"](np.array(3, "int64"), np.array(True), acc0, x)
    np.testing.assert_allclose(acc.numpy(), acc0 + 3 * x, rtol=1e-6)
    assert seen.shape == (3, 2)


@pytest.mark.parametrize(
    ("m", "message"),
    [
        (np.array([-2], "int64"), "must not be negative, got -2"),
        (np.array([2, 3], "int64"), "must be a scalar"),
    ],
)
def test_a_bad_trip_count_is_refused_naming_the_loop(m, message):
    model = _for_loop_model(m_shape=["k"])
    vm = relax.VirtualMachine(graphc.compile(from_onnx(model), "llvm"), graphc.cpu())
    with pytest.raises(ValueError, match=f"Loop node 'L'.*{message}"):
        vm["main"](m, np.array(True), rand(2), rand(2, seed=1))


def test_a_loop_without_trip_count_or_condition_is_refused():
    body = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Identity", ["v"], ["v_out"]),
        ],
        [("v", [2])],
    )
    node = helper.make_node("Loop", ["", "", "x"], ["y"], body=body, name="forever")
    model = make_model([node], [("x", None, [2])], [("y", F, [2])])
    with pytest.raises(graphc.errors.FrontendError, match="Loop node 'forever'.*never ends"):
        from_onnx(model)


def test_nested_loop_in_a_body_converted_again_leaves_no_stray_function():
    """The outer carried value grows, so the outer body is converted twice; the inner loop's
    body function of the first conversion is dropped."""
    inner = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["a", "one"], ["a_out"])],
        "inner",
        [info("j", I64, []), info("c_in", B, []), info("a", F, ["n"])],
        [info("c_out", B, []), info("a_out", F, ["n"])],
    )
    outer = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Loop", ["i", "cond_in", "v"], ["w"], body=inner),
            helper.make_node("Concat", ["w", "x"], ["v_out"], axis=0),
        ],
        [("v", ["n"])],
    )
    one = helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", F, [], [1.0]))
    node = helper.make_node("Loop", ["M", "go", "v0"], ["v"], body=outer)
    model = make_model(
        [one, node],
        [("M", np.int64, []), ("go", np.bool_, []), ("v0", None, [2]), ("x", None, [1])],
        [("v", F, ["k"])],
    )
    mod = from_onnx(model)
    assert len([gv for gv in mod.functions if gv.name_hint.endswith("_body")]) == 2
    check_model(model, [np.array(4, "int64"), np.array(True), rand(2), rand(1, seed=1)])


def _seq_info(name):
    return helper.make_tensor_sequence_value_info(name, F, None)


def test_loop_carrying_a_sequence_that_grows():
    """Each iteration inserts x[:i+1] * 2: the sequence's length is known only at run time;
    after the loop, its length, one element and all of them concatenated."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Add", ["i", "one"], ["end"]),
            helper.make_node("Unsqueeze", ["end", "zero"], ["ends"]),
            helper.make_node("Slice", ["x", "zero", "ends"], ["piece"]),
            helper.make_node("Add", ["piece", "piece"], ["doubled"]),
            helper.make_node("SequenceInsert", ["seq_in", "doubled"], ["seq_out"]),
        ],
        "body",
        [info("i", I64, []), info("cond_in", B, []), _seq_info("seq_in")],
        [info("cond_out", B, []), _seq_info("seq_out")],
    )
    consts = [
        helper.make_node("Constant", [], ["one"], value=helper.make_tensor("one", I64, [], [1])),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero", I64, [1], [0])),
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=F),
    ]
    after = [
        helper.make_node("Loop", ["M", "go", "empty"], ["seq"], body=body),
        helper.make_node("SequenceLength", ["seq"], ["n"]),
        helper.make_node("SequenceAt", ["seq", "pos"], ["picked"]),
        helper.make_node("ConcatFromSequence", ["seq"], ["all"], axis=0),
    ]
    model = make_model(
        consts + after,
        [("M", np.int64, []), ("go", np.bool_, []), ("x", None, [6]), ("pos", np.int64, [])],
        [("n", I64, []), ("picked", F, ["p"]), ("all", F, ["q"])],
    )
    assert "vm.builtin.sequence_insert" in from_onnx(model).script()
    for m, pos in ((1, 0), (4, -1), (6, 2)):
        check_model(model, [np.array(m, "int64"), np.array(True), rand(6), np.array(pos, "int64")])


def test_split_to_sequence_with_a_run_time_scalar_split():
    nodes = [
        helper.make_node("SplitToSequence", ["x", "size"], ["seq"], axis=1),
        helper.make_node("SequenceLength", ["seq"], ["n"]),
        helper.make_node("SequenceErase", ["seq"], ["shorter"]),
        helper.make_node("ConcatFromSequence", ["shorter"], ["rest"], axis=1),
        helper.make_node("SequenceAt", ["seq", "last"], ["tail"]),
    ]
    last = helper.make_tensor("last", I64, [], [-1])
    model = make_model(
        nodes,
        [("x", None, [2, 7]), ("size", np.int64, [])],
        [("n", I64, []), ("rest", F, [2, "r"]), ("tail", F, [2, "t"])],
        initializers=[last],
    )
    for size in (2, 3, 4):
        check_model(model, [rand(2, 7), np.array(size, "int64")])


def test_a_run_time_sequence_position_out_of_range_is_an_index_error():
    nodes = [
        helper.make_node("SplitToSequence", ["x", "size"], ["seq"]),
        helper.make_node("SequenceAt", ["seq", "pos"], ["y"], name="at"),
    ]
    model = make_model(
        nodes, [("x", None, [5]), ("size", np.int64, []), ("pos", np.int64, [])], [("y", F, ["k"])]
    )
    vm = relax.VirtualMachine(graphc.compile(from_onnx(model), "llvm"), graphc.cpu())
    message = "SequenceAt node 'at'.*position 3 is out of range for a sequence of 3"
    with pytest.raises(IndexError, match=message):
        vm["main"](rand(5), np.array(2, "int64"), np.array(3, "int64"))


def test_an_unroll_abandoned_for_a_run_time_condition_leaves_no_stray_function():
    """A constant trip count of 3, but the condition is computed from an input: the attempt to
    unroll (which converts the inner loop, a VM loop, once) is dropped for a VM loop."""
    inner = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["a", "x"], ["a_out"])],
        "inner",
        [info("j", I64, []), info("c_in", B, []), info("a", F, [2])],
        [info("c_out", B, []), info("a_out", F, [2])],
    )
    outer = _body(
        [
            helper.make_node("Loop", ["N", "cond_in", "acc"], ["acc_out"], body=inner),
            helper.make_node("ReduceSum", ["acc_out"], ["total"], keepdims=0),
            helper.make_node("Less", ["total", "limit"], ["cond_out"]),
        ],
        [("acc", [2])],
    )
    m = helper.make_node("Constant", [], ["M"], value=helper.make_tensor("m", I64, [], [3]))
    go = helper.make_node("Constant", [], ["go"], value=helper.make_tensor("go", B, [], [True]))
    node = helper.make_node("Loop", ["M", "go", "acc0"], ["acc"], body=outer)
    model = make_model(
        [m, go, node],
        [("N", np.int64, []), ("acc0", None, [2]), ("x", None, [2]), ("limit", None, [])],
        [("acc", F, [2])],
    )
    mod = from_onnx(model)
    assert len([gv for gv in mod.functions if gv.name_hint.endswith("_body")]) == 2
    for limit in (0.5, 100.0):
        check_model(
            model, [np.array(2, "int64"), rand(2), np.abs(rand(2, seed=1)), np.array(limit, "float32")]
        )


def test_a_carried_value_of_a_symbolic_size_that_grows():
    """v starts with the size n of x, which the body also reads: v's parameter must get a size
    of its own, not n."""
    body = _body(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Concat", ["v", "x"], ["v_out"], axis=0),
        ],
        [("v", ["n"])],
    )
    node = helper.make_node("Loop", ["M", "go", "v0"], ["v"], body=body)
    model = make_model(
        [node],
        [("M", np.int64, []), ("go", np.bool_, []), ("v0", None, ["n"]), ("x", None, ["n"])],
        [("v", F, ["k"])],
    )
    check_model(model, [np.array(3, "int64"), np.array(True), rand(2), rand(2, seed=1)])


def test_a_second_compile_of_a_loop_loads_it_from_the_compile_cache(tmp_path, monkeypatch):
    from graphc import compile_cache
    from graphc.ir import transform

    monkeypatch.setattr(transform, "_GLOBAL_INSTRUMENTS", [])  # the suite's round-trip check aside
    monkeypatch.setenv("GRAPHC_CACHE", "1")
    monkeypatch.setenv("GRAPHC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(compile_cache, "MIN_SECONDS", 0.0)  # store even a quick compile
    mod = from_onnx(_for_loop_model())
    graphc.compile(mod, "llvm")
    compile_cache.wait()
    hits = compile_cache.STATS["hits"]
    exe = graphc.compile(from_onnx(_for_loop_model()), "llvm")
    assert compile_cache.STATS["hits"] == hits + 1
    acc0, x = rand(2), rand(2, seed=1)
    acc, seen = relax.VirtualMachine(exe, graphc.cpu())["main"](np.array(4, "int64"), np.array(True), acc0, x)
    np.testing.assert_allclose(acc.numpy(), acc0 + 6 * x, rtol=1e-6)
    assert seen.shape == (4, 2)


@pytest.mark.parametrize("m", [np.array(-1, "int64"), np.array([2, 3], "int64")])
def test_a_bad_constant_trip_count_is_refused_at_import(m):
    node = helper.make_node("Loop", ["M", "cond", "acc0"], ["acc", "seen"], body=_accumulate_body(), name="L")
    model = make_model(
        [node],
        [("cond", np.bool_, []), ("acc0", None, [2]), ("x", None, [2])],
        [("acc", F, [2]), ("seen", F, ["T", 2])],
        initializers=[numpy_helper.from_array(m, "M")],
    )
    with pytest.raises(graphc.errors.FrontendError, match="Loop node 'L'.*non-negative scalar"):
        from_onnx(model)


def _sequence_scan_output_model(length):
    """A Scan whose body's scan output is a sequence (ONNX types scan outputs as tensors)."""
    seq_type = helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [2]))
    body = helper.make_graph(
        [helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("SequenceConstruct", ["x"], ["seq"])],
        "body",
        [info("s", F, [2]), info("x", F, [2])],
        [info("s2", F, [2]), helper.make_value_info("seq", seq_type)],
    )
    node = helper.make_node("Scan", ["s0", "xs"], ["sf", "ys"], num_scan_inputs=1, body=body, name="scan1")
    return make_model([node], [("s0", None, [2]), ("xs", None, [length, 2])],
                      [("sf", None, [2]), ("ys", None, [None, 2])], opset=17)


@pytest.mark.parametrize("length", [3, "n"], ids=["unrolled", "run-time"])
def test_a_sequence_scan_output_is_refused_by_name(length):
    with pytest.raises(FrontendError, match=r"Scan node 'scan1' .*'seq'.* is a sequence or an optional"):
        from_onnx(_sequence_scan_output_model(length))


def test_a_carried_empty_optional_in_a_run_time_loop_is_refused_by_name():
    """The optional would change type (empty, then a tensor) between iterations of a VM loop."""
    opt_type = helper.make_optional_type_proto(helper.make_tensor_type_proto(F, [2]))
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
            helper.make_node("Optional", ["x"], ["opt_out"]),
        ],
        "body",
        [info("i", I64, []), info("cond_in", B, []), helper.make_value_info("opt", opt_type)],
        [info("cond_out", B, []), helper.make_value_info("opt_out", opt_type)],
    )
    nodes = [
        helper.make_node("Optional", [], ["empty"], type=helper.make_tensor_type_proto(F, [2])),
        helper.make_node("Loop", ["m", "c", "empty"], ["last"], body=body, name="loop1"),
        helper.make_node("OptionalHasElement", ["last"], ["has"]),
    ]
    model = make_model(nodes, [("m", I64, []), ("c", B, []), ("x", None, [2])], [("has", B, [])], opset=18)
    with pytest.raises(FrontendError, match=r"Loop node 'loop1' .*loop-carried value 0 is an empty optional"):
        from_onnx(model)
