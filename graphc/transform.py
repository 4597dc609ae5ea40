"""`graphc.transform`: TVM's `tvm.transform`, the pass infrastructure under its porting name.

Every name here is the object of `graphc.ir.transform` itself (not a copy), so a
`PassContext` entered through one module is the context the other sees.

>>> import graphc
>>> graphc.transform.PassContext is graphc.ir.transform.PassContext
True
>>> with graphc.transform.PassContext(opt_level=3, disabled_pass=["FuseOps"]) as ctx:
...     graphc.ir.transform.PassContext.current() is ctx
True
"""

from .ir.transform import (
    FunctionPass,
    ModulePass,
    Pass,
    PassContext,
    PassInfo,
    PassInstrument,
    PassTimingInstrument,
    PrintAfterAll,
    PrintBeforeAll,
    Sequential,
    add_global_instrument,
    function_pass,
    get_pass,
    module_pass,
    pass_instrument,
    remove_global_instrument,
)

__all__ = [
    "FunctionPass",
    "ModulePass",
    "Pass",
    "PassContext",
    "PassInfo",
    "PassInstrument",
    "PassTimingInstrument",
    "PrintAfterAll",
    "PrintBeforeAll",
    "Sequential",
    "add_global_instrument",
    "function_pass",
    "get_pass",
    "module_pass",
    "pass_instrument",
    "remove_global_instrument",
]
