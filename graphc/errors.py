"""The exception hierarchy every part of graphc raises from.

Each error subclasses the builtin a caller would expect (`ValueError`, `TypeError`,
`RuntimeError`) so `except ValueError` keeps working, and `GraphcError` so that one
`except` catches everything graphc raises on purpose.
"""


class GraphcError(Exception):
    """Base class of every error graphc raises on purpose."""


class DataTypeError(GraphcError, ValueError):
    """A data type string could not be parsed or is not supported here."""


class TIRError(GraphcError, ValueError):
    """A TensorIR expression or statement was built from invalid parts."""


class VerifyError(GraphcError, ValueError):
    """A well-formedness checker found a violation in the IR."""


class TypeInferenceError(GraphcError, TypeError):
    """Struct info inference rejected an operator's arguments (names op, argument, expected, actual)."""


class ScriptError(GraphcError, SyntaxError):
    """The script parser rejected its input; the message names line and column."""


class ScheduleError(GraphcError, ValueError):
    """A schedule primitive's preconditions do not hold; the schedule is unchanged."""


class CodegenError(GraphcError, RuntimeError):
    """Code generation could not translate a construct to the target."""


class TargetError(GraphcError, ValueError):
    """A target description could not be parsed or is not supported."""


class DeviceError(GraphcError, RuntimeError):
    """A device is not available, or an operation is not supported on it."""


class FrontendError(GraphcError, ValueError):
    """A model the frontend cannot import as given: an argument value it does not support."""


class UnsupportedOperatorError(GraphcError, NotImplementedError):
    """The model uses operators the frontend has no conversion for (all of them are listed)."""
