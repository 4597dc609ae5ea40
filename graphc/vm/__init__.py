"""The bytecode virtual machine: executables, their file format, the VM and its builtins.

Nothing here imports the compiler (`relax`, frontends, `tir`): a saved executable loads and
runs with `graphc.runtime` and `graphc.vm` alone.

    exe = graphc.compile(mod, target="llvm")        # an Executable
    exe.export_library("model.gvm")
    vm = graphc.vm.VirtualMachine(graphc.vm.Executable.load("model.gvm"), graphc.cpu())
    out = vm["main"](x)

>>> from graphc.vm import Executable, VirtualMachine
>>> VirtualMachine.__name__, Executable.__name__
('VirtualMachine', 'Executable')
"""

from . import data_dependent, loop, sequence  # noqa: F401 - register their builtins
from .builtins import get_builtin, list_builtins, register_builtin
from .bytecode import VOID, Arg, Call, FuncEntry, Goto, If, Ret
from .executable import FORMAT_VERSION, Executable, ExecutableFormatError
from .outputs import NamedOutputs
from .profiler import ProfileReport, ProfileRow
from .shape_codes import MakeShapeCode, MatchShapeCode
from .values import DataType, ShapeTuple, Storage, VMError
from .vm import VirtualMachine

__all__ = [
    "FORMAT_VERSION", "VOID", "Arg", "Call", "DataType", "Executable", "ExecutableFormatError", "FuncEntry",
    "Goto", "If", "MakeShapeCode", "MatchShapeCode", "NamedOutputs", "ProfileReport", "ProfileRow", "Ret",
    "ShapeTuple", "Storage", "VMError", "VirtualMachine", "get_builtin", "list_builtins", "register_builtin",
]
