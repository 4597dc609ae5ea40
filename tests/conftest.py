"""Suite-wide checks: every module the tests lower or build is well formed and round-trips
through the script printer and parser (print, parse, compare structurally).

This turns every test that builds a tensor program into a check of the verifier's and the
printer's contracts, on exactly the IR the test made. Set GRAPHC_TEST_ROUNDTRIP=0 to skip it
while debugging something else.

`--long-run FACTOR` (what `scripts/long_run.sh` passes) runs every hypothesis property test
with FACTOR times its examples, drawn at random. Without it the tests keep their own settings
under hypothesis's active profile, which is its derandomized `ci` profile when CI=true.
"""

import os

# pytest-xdist runs several workers on few cores, each with its own libgomp team: spinning
# idle threads (libgomp's default) would steal the cores other workers need. Read by libgomp
# when it loads, so set before graphc is imported.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import pytest  # noqa: E402

from graphc.ir import IRModule, structural_equal  # noqa: E402
from graphc.ir.instrument import pass_instrument  # noqa: E402
from graphc.ir.transform import add_global_instrument, remove_global_instrument  # noqa: E402
from graphc.tir import PrimFunc  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--long-run", type=int, default=0, metavar="FACTOR",
                     help="run each hypothesis property test with FACTOR times its examples, drawn at "
                          "random even where the test is derandomized (see scripts/long_run.sh)")


def pytest_collection_modifyitems(config, items):
    factor = config.getoption("--long-run")
    if factor > 0:
        _scale_property_tests(items, factor)


def _scale_property_tests(items, factor: int) -> None:
    from hypothesis import settings

    scaled = set()
    for item in items:
        fn = getattr(item, "obj", None)
        fn = getattr(fn, "__func__", fn)
        if not getattr(fn, "is_hypothesis_test", False) or id(fn) in scaled:
            continue  # a parametrized test is one function: scale it once
        scaled.add(id(fn))
        # The attribute hypothesis keeps a test's settings in; its own pytest plugin
        # replaces it the same way (with a child of the test's settings).
        own = fn._hypothesis_internal_use_settings
        fn._hypothesis_internal_use_settings = settings(
            own, max_examples=own.max_examples * factor, derandomize=False, deadline=None, print_blob=True)


def check_module_contracts(mod: IRModule) -> None:
    """Assert `mod` is well formed and that parse(print(mod)) is structurally equal to it."""
    from graphc.script import from_source
    from graphc.tir.analysis import verify_well_formed

    for gv, func in mod.items():
        if not isinstance(func, PrimFunc):
            continue
        verify_well_formed(func)
        text = func.script()
        parsed = from_source(text)
        if not structural_equal(parsed, func):
            raise AssertionError(f"print/parse round trip changed {gv.name_hint}:\n{text}\n--- parsed ---\n"
                                 f"{parsed.script()}")


@pass_instrument
class ContractCheck:
    """Checks the input of every TensorIR lowering ("tir.lower") any test runs."""

    def run_before_pass(self, mod, info):
        if info.name == "tir.lower":
            check_module_contracts(mod)


@pytest.fixture(autouse=True)
def _roundtrip_every_lowered_module():
    if os.environ.get("GRAPHC_TEST_ROUNDTRIP", "1") == "0":
        yield
        return
    check = ContractCheck()
    add_global_instrument(check)
    try:
        yield
    finally:
        remove_global_instrument(check)
