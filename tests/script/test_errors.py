"""Parse errors: ScriptError naming file, line and column, with the source line and a caret."""

import pytest

from graphc.errors import ScriptError
from graphc.script import from_source
from graphc.script import tir as T

HEADER = '@T.prim_func\ndef f(A: T.Buffer((4,), "float32")):\n'


def parse_error(body: str) -> str:
    with pytest.raises(ScriptError) as info:
        from_source(HEADER + body)
    return str(info.value)


def test_unknown_name_points_at_it():
    msg = parse_error("    for i in range(4):\n        A[i] = foo + 1.0\n")
    lines = msg.split("\n")
    assert lines[0] == ("<string>:4:16: error: unknown name 'foo': expected a variable, buffer "
                        "or parameter defined before this point, or a module-level name")
    assert lines[1] == "    A[i] = foo + 1.0"
    assert lines[2] == "           ^^^"


def test_wrong_number_of_axis_arguments():
    msg = parse_error('    for i in range(4):\n        with T.block("b"):\n            vi = T.axis.spatial(4)\n'
                      '            A[vi] = T.float32(0)\n')
    assert "<string>:5:18" in msg and "expects 2 arguments" in msg
    assert "vi = T.axis.spatial(4)" in msg


def test_unsupported_statement():
    msg = parse_error("    def g():\n        pass\n")
    assert "<string>:3:5: error: unsupported statement (FunctionDef)" in msg


def test_unsupported_expression():
    msg = parse_error("    A[0] = (y := 1.0)\n")
    assert "unsupported expression (NamedExpr)" in msg


def test_reads_outside_a_block():
    msg = parse_error("    T.reads(A[0])\n")
    assert "T.reads must be directly inside a `with T.block(...)`" in msg


def test_remap_of_non_loop_var_and_bad_kinds():
    msg = parse_error('    with T.block("b"):\n        vi = T.axis.remap("S", [T.int32(1)])\n')
    assert "binds loop variables only" in msg
    msg = parse_error('    for i in range(4):\n        with T.block("b"):\n'
                      '            vi, vj = T.axis.remap("S", [i, i])\n')
    assert "one entry per name" in msg


def test_store_dtype_mismatch_suggests_a_cast():
    msg = parse_error("    A[0] = T.int64(1)\n")
    assert "cannot store a int64 value into buffer A of dtype float32" in msg
    assert "T.Cast('float32', ...)" in msg


def test_wrong_intrinsic_arity_and_unknown_attribute():
    assert "T has no attribute 'nosuch'" in parse_error("    A[0] = T.nosuch(1)\n")
    msg = parse_error("    A[0] = T.exp(A[0], A[1])\n")
    assert "<string>:3:12" in msg


def test_missing_annotation_and_bad_loop():
    with pytest.raises(ScriptError, match="needs a type"):
        from_source("@T.prim_func\ndef f(a):\n    T.evaluate(0)\n")
    msg = parse_error("    for i in [1, 2]:\n        T.evaluate(i)\n")
    assert "expected range(...)" in msg


def test_invalid_python_syntax():
    with pytest.raises(ScriptError, match="invalid Python syntax"):
        from_source("@T.prim_func\ndef f(:\n")


def test_no_function_in_source():
    with pytest.raises(ScriptError, match="expected an @I.ir_module class or a @T.prim_func"):
        from_source("x = 1\n")


def test_errors_in_decorated_functions_name_the_file():
    with pytest.raises(ScriptError) as info:

        @T.prim_func
        def f(A: T.Buffer((4,), "float32")):
            A[0] = undefined_name  # noqa: F821

    msg = str(info.value)
    assert "test_errors.py:" in msg and "unknown name 'undefined_name'" in msg
    assert "A[0] = undefined_name" in msg and "^^^^^^^^^^^^^^" in msg


def test_script_errors_are_syntax_errors():
    with pytest.raises(SyntaxError):
        from_source(HEADER + "    A[0] = nope\n")
