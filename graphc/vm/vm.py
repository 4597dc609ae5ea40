"""`VirtualMachine`: runs an `Executable`'s functions on a device.

>>> from graphc.vm.bytecode import Arg, FuncEntry, Ret
>>> from graphc.vm.executable import Executable
>>> exe = Executable([FuncEntry("vm", "main", ["x"], 1, [Ret(Arg.reg(0))])], [])
>>> vm = VirtualMachine(exe, cpu())
>>> vm["main"](np.arange(3, dtype="float32")).numpy()
array([0., 1., 2.], dtype=float32)

Every call gets its own register file (a `Frame`, taken from a per-function pool and given
back afterwards), so several threads may call the same VM at once.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..runtime.device import ALIGNMENT, Device, cpu
from ..runtime.device import device as make_device
from ..runtime.tensor import Tensor, tensor
from .builtins import get_builtin
from .decode import Decoder, FrameLayout
from .executable import Executable
from .outputs import ATTR as _STRUCTURE
from .outputs import reader as _reader
from .profiler import ProfileReport, Recorder
from .values import VMError


class Frame:
    """The resources of one running call: registers, kernel slot buffer, and reusable memory."""

    __slots__ = ("regs", "vm", "buffer")

    def __init__(self, vm: VirtualMachine, layout: FrameLayout, cache_slots: int, nslots: int):
        self.vm = vm
        self.buffer = (ctypes.c_int64 * max(nslots, 1))()
        regs = [None] * layout.size
        regs[layout.CTX] = self
        regs[layout.BUF] = self.buffer
        regs[layout.ADDR] = ctypes.addressof(self.buffer)
        regs[layout.CACHE] = [None] * cache_slots
        self.regs = regs

    def device(self, index: int) -> Device:
        return self.vm.device_of(index)


class _Function:
    """One decoded VM function: its blocks and its pool of frames."""

    def __init__(self, vm: VirtualMachine, findex: int, profile=None):
        entry = vm.executable.functions[findex]
        self.vm, self.entry, self.name = vm, entry, entry.name
        self.params = list(entry.params)
        self.nparams = len(self.params)
        self.layout = FrameLayout(entry.num_registers)
        decoder = Decoder(vm, findex, profile)
        self.blocks, self.cache_slots = decoder.decode()
        self.source = decoder.source  # the decoded Python, for inspection
        self.pool: list[Frame] = []
        self.blank = [None] * (self.layout.RET + 1)
        self.invoke = self._make_invoke()

    def _make_invoke(self):
        blocks, pool, blank, n = self.blocks, self.pool, self.blank, self.nparams
        ret, clear = self.layout.RET, self.layout.RET + 1
        single = blocks[0] if len(blocks) == 1 else None
        new_frame = self.new_frame

        def invoke(*args):
            if len(args) != n:
                raise ValueError(f"{self.name} takes {n} arguments ({', '.join(self.params)}), "
                                 f"got {len(args)}")
            try:
                frame = pool.pop()
            except IndexError:
                frame = new_frame()
            regs = frame.regs
            regs[:n] = args
            try:
                if single is not None:
                    single(regs)
                else:
                    b = 0
                    while b >= 0:
                        b = blocks[b](regs)
                return regs[ret]
            finally:
                regs[:clear] = blank
                pool.append(frame)

        return invoke

    def new_frame(self) -> Frame:
        return Frame(self.vm, self.layout, self.cache_slots, self.vm._kernel_slots)


def _TORCH_BF16():  # noqa: N802 - a constant looked up lazily (torch is optional)
    import torch

    return torch.bfloat16


class VirtualMachine:
    """Runs the functions of `exe` on `device` (a Device, a device name, or a list of them).

    `vm["main"](*inputs)` takes graphc tensors, numpy arrays and torch tensors (through
    DLPack, zero-copy when possible) and returns graphc tensors (tuples as Python tuples),
    shaped like the model's own result where the importer recorded it (one tensor, a
    tuple, a dict, ...; see `graphc.vm.outputs`).
    """

    def __init__(self, exe: Executable, device=None, memory_cfg=None, profile: bool = False):
        if not isinstance(exe, Executable):
            raise TypeError(f"VirtualMachine expects a graphc.vm.Executable, got {type(exe).__name__}; "
                            "build one with graphc.compile(mod, target)")
        self.executable = exe
        devices = device if isinstance(device, list | tuple) else [device if device is not None else cpu()]
        self.devices = [d if isinstance(d, Device) else make_device(d) for d in devices]
        self._kernel_slots = 1
        self._kernels: dict[int, object] = {}
        self._constants = [self._place(c) for c in exe.constants]
        self.callers: list = [None] * len(exe.functions)
        self._functions: dict[int, _Function] = {}
        for findex, entry in enumerate(exe.functions):
            if entry.kind == "vm":
                func = self._functions[findex] = self._decode(findex)
                self.callers[findex] = func.invoke
        # Functions whose model returns more than a flat tuple rebuild its shape (vm/outputs.py).
        self._readers = {func.name: _reader(func.entry.attrs[_STRUCTURE])
                         for func in self._functions.values() if _STRUCTURE in func.entry.attrs}
        # The decoded functions never change, so `vm[name]` hands out one entry per function.
        self._entries = {func.name: _ShapedEntry(self, func, self._readers[func.name])
                         if func.name in self._readers else _Entry(self, func)
                         for func in self._functions.values()}
        self._inputs: dict[str, tuple] = {}
        self._outputs: dict[str, object] = {}

    def _decode(self, findex: int) -> _Function:
        """Decode VM function `findex` (the profiler's VM decodes with timing)."""
        return _Function(self, findex)

    # -- resolution at load time ----------------------------------------------------------------
    def device_of(self, index: int) -> Device:
        """The device the executable's virtual device `index` runs on."""
        virtual = self.executable.virtual_devices
        want = virtual[index].device_type if 0 <= index < len(virtual) else self.devices[0].device_type
        for d in self.devices:
            if d.device_type == want:
                return d
        if want == "cpu":
            return cpu()
        raise VMError(f"the executable needs a {want} device, but this VirtualMachine has "
                      f"{', '.join(str(d) for d in self.devices)}")

    def _place(self, const):
        home = self.devices[0]
        if isinstance(const, Tensor) and const.device != home and home.device_type != "cpu":
            return const.copyto(self.devices[0])
        return const

    # -- the decoder's interface (`decode.DecoderHost`): used once, at load time ------------------
    def constant(self, index: int):
        """Constant `index` of the executable, placed on this VM's device."""
        return self._constants[index]

    def kernel(self, findex: int):
        """The loaded kernel of function `findex`, looked up in its device's code module once."""
        kernel = self._kernels.get(findex)
        if kernel is None:
            entry = self.executable.functions[findex]
            module = self.executable.modules.get(entry.device)
            if module is None:
                raise VMError(f"kernel {entry.name!r} runs on {entry.device}, but the executable has no "
                              f"{entry.device} code")
            kernel = self._kernels[findex] = module.get_function(entry.name)
        return kernel

    def builtin(self, name: str):
        """The builtin `name`; a VMError when the executable calls one that is not registered."""
        fn = get_builtin(name)
        if fn is None:
            raise VMError(f"the executable calls {name!r}, which is neither a builtin nor a kernel; "
                          "register it with graphc.vm.register_builtin")
        return fn

    def function_value(self, findex: int):
        """Function `findex` as a value: a kernel, a builtin, or a VM function (called late)."""
        entry = self.executable.functions[findex]
        if entry.kind == "kernel":
            return self.kernel(findex)
        if entry.kind == "builtin":
            return self.builtin(entry.name)
        return _LateCall(self.callers, findex)

    def reserve_kernel_slots(self, nbytes: int) -> None:
        """Make the kernel argument buffer of every frame at least `nbytes` long."""
        self._kernel_slots = max(self._kernel_slots, (nbytes + 7) // 8)

    # -- calling -------------------------------------------------------------------------------
    def _function(self, name: str) -> _Function:
        findex = self.executable.func_index.get(name)
        if findex is None:
            raise KeyError(f"the executable has no function {name!r}; it has: "
                           f"{', '.join(self.executable.function_names)}")
        return self._functions[findex]

    def __getitem__(self, name: str):
        entry = self._entries.get(name)
        if entry is None:
            self._function(name)  # raises the KeyError naming the functions there are
        return entry

    def __contains__(self, name) -> bool:
        return name in self.executable.func_index

    def _prepare(self, func: _Function, args) -> tuple:
        if len(args) != func.nparams:
            raise ValueError(f"{func.name} takes {func.nparams} inputs ({', '.join(func.params)}), "
                             f"got {len(args)}")
        return tuple(self._convert(a) for a in args)

    def _convert(self, value):
        cls = type(value)
        if cls is Tensor:
            if value.is_aligned and value.device == self.devices[0]:
                return value
            if value.device != self.devices[0]:
                return value.copyto(self.devices[0])
            return tensor(value, value.device)
        if cls is np.ndarray:
            if value.flags.c_contiguous and value.__array_interface__["data"][0] % ALIGNMENT == 0 \
                    and value.dtype.isnative and self.devices[0].device_type == "cpu":
                return Tensor._from_host_array(value)
            return tensor(value.copy(order="C"), self.devices[0])  # ascontiguousarray makes 0-d 1-d
        if cls is tuple or cls is list:
            return tuple(self._convert(v) for v in value)
        if isinstance(value, bool | int | float | str) or value is None:
            return value
        if isinstance(value, np.generic):
            return value.item()
        if cls.__module__ == "torch" and cls.__name__ == "Tensor" and value.device.type == "cpu" \
                and value.dtype is not _TORCH_BF16():
            # a CPU torch tensor shares its memory with numpy (faster than a DLPack capsule)
            return self._convert(value.detach().numpy())
        if hasattr(value, "__dlpack__"):
            from ..runtime.dlpack import from_dlpack

            t = from_dlpack(value.detach() if hasattr(value, "detach") else value)
            return self._convert(t)
        return value

    def invoke(self, name: str, *args):
        """Call function `name` on already converted arguments (no input conversion); the result
        is the function's own (a flat tuple where `vm[name]` rebuilds the model's structure)."""
        return self._function(name).invoke(*args)

    # -- TVM's stateful interface --------------------------------------------------------------
    def set_input(self, func_name: str, *args, **kwargs) -> None:
        """Store the inputs of `func_name` for `invoke_stateful` (keywords by parameter name)."""
        func = self._function(func_name)
        if kwargs:
            args = list(args) + [None] * (func.nparams - len(args))
            for key, value in kwargs.items():
                if key not in func.params:
                    raise ValueError(f"{func_name} has no parameter {key!r}; it has {', '.join(func.params)}")
                args[func.params.index(key)] = value
        self._inputs[func_name] = self._prepare(func, args)

    def invoke_stateful(self, func_name: str) -> None:
        """Run `func_name` on the inputs given by `set_input`; read the result with `get_outputs`."""
        if func_name not in self._inputs:
            raise ValueError(f"no inputs set for {func_name!r}; call vm.set_input({func_name!r}, ...) first")
        self._outputs[func_name] = self._function(func_name).invoke(*self._inputs[func_name])

    def get_outputs(self, func_name: str):
        """The result of the last `invoke_stateful(func_name)`, shaped like `vm[func_name]`'s."""
        if func_name not in self._outputs:
            raise ValueError(f"{func_name!r} has not been run with invoke_stateful yet")
        read = self._readers.get(func_name)
        out = self._outputs[func_name]
        return out if read is None else read(out)

    # -- measuring -----------------------------------------------------------------------------
    def time_evaluator(self, func_name: str, dev=None, number: int = 10, repeat: int = 1,
                       min_repeat_ms: int = 0, cooldown_interval_ms: int = 0, f_preproc=None):
        """`f(*args) -> BenchmarkResult`, timing `func_name`; no args: the `set_input` inputs."""
        from ..runtime.profiling import time_evaluator

        func = self._function(func_name)
        dev = dev if dev is not None else self.devices[0]
        timed = time_evaluator(func.invoke, dev, number=number, repeat=repeat, min_repeat_ms=min_repeat_ms,
                               cooldown_interval_ms=cooldown_interval_ms, f_preproc=f_preproc)

        def evaluator(*args):
            if not args and func_name in self._inputs:
                prepared = self._inputs[func_name]
            else:
                prepared = self._prepare(func, args)
            return timed(*prepared)

        return evaluator

    def profile(self, func_name: str, *args) -> ProfileReport:
        """Run `func_name` once, timing every kernel and builtin call; returns a printable table."""
        findex = self.executable.func_index.get(func_name)
        if findex is None:
            self._function(func_name)  # raises the KeyError
        recorder = Recorder()
        profiled = _ProfiledVM(self, recorder)
        func = profiled._functions[findex]
        prepared = self._prepare(func, args)
        func.invoke(*prepared)  # warm-up: first calls allocate the memory plan
        recorder.reset()
        import time

        start = time.perf_counter()
        func.invoke(*prepared)
        total = time.perf_counter() - start
        return recorder.report(total)

    def __repr__(self) -> str:
        return f"<graphc.VirtualMachine {self.executable.function_names} on {self.devices}>"


class _ProfiledVM(VirtualMachine):
    """A VM on the same executable and devices whose functions time every kernel and builtin call."""

    def __init__(self, vm: VirtualMachine, recorder: Recorder):
        self._record = recorder.record
        super().__init__(vm.executable, vm.devices)

    def _decode(self, findex: int) -> _Function:
        return _Function(self, findex, profile=self._record)


class _LateCall:
    """A VM function used as a value (resolved when called, so functions may refer to each other)."""

    __slots__ = ("callers", "index")

    def __init__(self, callers: list, index: int):
        self.callers, self.index = callers, index

    def __call__(self, *args):
        return self.callers[self.index](*args)


class _Entry:
    """`vm["name"]`: converts the inputs, then runs the function."""

    __slots__ = ("vm", "func", "invoke", "nparams")

    def __init__(self, vm: VirtualMachine, func: _Function):
        self.vm, self.func, self.invoke, self.nparams = vm, func, func.invoke, func.nparams

    def __call__(self, *args):
        if len(args) != self.nparams:
            return self.invoke(*self.vm._prepare(self.func, args))
        convert = self.vm._convert
        return self.invoke(*[convert(a) for a in args])

    def __repr__(self) -> str:
        return f"<VM function {self.func.name}({', '.join(self.func.params)})>"


class _ShapedEntry(_Entry):
    """`vm["name"]` of a function with an "output_structure": its result shaped like the model's."""

    __slots__ = ("read",)

    def __init__(self, vm: VirtualMachine, func: _Function, read):
        super().__init__(vm, func)
        self.read = read

    def __call__(self, *args):
        return self.read(_Entry.__call__(self, *args))


__all__ = ["Frame", "VirtualMachine"]
