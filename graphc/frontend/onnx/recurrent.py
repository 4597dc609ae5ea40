"""Recurrent layers: RNN, GRU, LSTM, unrolled over a sequence length known at import.

Every attribute of the three operators is read: `direction` (forward, reverse,
bidirectional), `layout` (0: time-major `[seq, batch, ...]`, 1: batch-major), `hidden_size`,
`activations` with their `activation_alpha` / `activation_beta`, `clip` (applied to every
gate's input before its activation; not to the cell state LSTM's `h` reads, as in ONNX
Runtime), GRU's `linear_before_reset` and LSTM's `input_forget`.
The optional inputs `B`, `sequence_lens`, `initial_h`, `initial_c` and `P` (peepholes) may be
constants or graph inputs.

The input projection `X W^T + Wb` of every time step is one matrix product; each step then
adds `H R^T + Rb` and applies the gates. With `sequence_lens`, a batch entry whose sequence has
ended keeps its hidden (and cell) state and gets zeros in `Y` (ONNX Runtime's semantics): a
reverse pass starts at each entry's own last step.
"""

from __future__ import annotations

from ... import relax
from .common import Emitting, const_like, ndim_of, shape_expr, shape_of
from .registry import converter

op = Emitting(relax.op)

UNROLL_LIMIT = 1024  # time steps: a longer sequence is refused


def _c(value, like):
    return const_like(value, like)


def _affine(x, a, b):
    return op.add(op.multiply(x, _c(a, x)), _c(b, x))


def _leaky_relu(x, a, b):
    return op.where(op.less(x, _c(0, x)), op.multiply(x, _c(a, x)), x)


def _thresholded_relu(x, a, b):
    return op.where(op.greater(x, _c(a, x)), x, op.zeros_like(x))


def _scaled_tanh(x, a, b):
    return op.multiply(_c(a, x), op.tanh(op.multiply(x, _c(b, x))))


def _hard_sigmoid(x, a, b):
    return op.minimum(op.maximum(_affine(x, a, b), _c(0, x)), _c(1, x))


def _elu(x, a, b):
    return op.where(op.less(x, _c(0, x)), op.multiply(_c(a, x), op.subtract(op.exp(x), _c(1, x))), x)


def _softsign(x, a, b):
    return op.divide(x, op.add(_c(1, x), op.abs(x)))


def _softplus(x, a, b):
    # log(1 + e^x) without overflow: max(x, 0) + log(1 + e^-|x|)
    return op.add(op.maximum(x, _c(0, x)), op.log(op.add(_c(1, x), op.exp(op.negative(op.abs(x))))))


# lower-case name -> (takes alpha, takes beta, (default alpha, default beta), fn(x, alpha, beta))
ACTIVATIONS = {
    "relu": (0, 0, (None, None), lambda x, a, b: op.maximum(x, _c(0, x))),
    "tanh": (0, 0, (None, None), lambda x, a, b: op.tanh(x)),
    "sigmoid": (0, 0, (None, None), lambda x, a, b: op.sigmoid(x)),
    "affine": (1, 1, (1.0, 0.0), _affine),
    "leakyrelu": (1, 0, (0.01, None), _leaky_relu),
    "thresholdedrelu": (1, 0, (1.0, None), _thresholded_relu),
    "scaledtanh": (1, 1, (1.0, 1.0), _scaled_tanh),
    "hardsigmoid": (1, 1, (0.2, 0.5), _hard_sigmoid),
    "elu": (1, 0, (1.0, None), _elu),
    "softsign": (0, 0, (None, None), _softsign),
    "softplus": (0, 0, (None, None), _softplus),
}

# operator -> (gates, default activations)
KINDS = {"RNN": (1, ["Tanh"]), "GRU": (3, ["Sigmoid", "Tanh"]), "LSTM": (4, ["Sigmoid", "Tanh", "Tanh"])}


class _Activation:
    """One activation function with its alpha and beta, applied after the optional clip."""

    def __init__(self, name: str, alpha, beta, clip):
        self.name, self.alpha, self.beta, self.clip = name, alpha, beta, clip

    def __call__(self, x, clip: bool = True):
        if clip and self.clip is not None:
            x = op.clip(x, relax.PrimValue(-self.clip), relax.PrimValue(self.clip))
        return ACTIVATIONS[self.name][3](x, self.alpha, self.beta)


def _activations(node, per_direction: int, directions: int, clip) -> list[list[_Activation]]:
    """The activation functions of each direction: the attribute's (consuming the alpha and
    beta lists in order, by the functions that take them) or the operator's defaults."""
    defaults = KINDS[node.op_type][1]
    names = node.attr("activations", None)
    alphas = list(node.attr("activation_alpha", None) or [])
    betas = list(node.attr("activation_beta", None) or [])
    if names is None:
        names = defaults * directions
    elif len(names) == per_direction and directions == 2:
        names = list(names) * 2
    if len(names) != per_direction * directions:
        count = per_direction * directions
        raise node.unsupported(
            "activations", names, f"must name {count} function(s) for {directions} direction(s)"
        )
    out = []
    for name in names:
        key = name.lower()
        if key not in ACTIVATIONS:
            raise node.unsupported("activations", names, f"has the unknown function {name!r}")
        n_alpha, n_beta, (alpha, beta), _ = ACTIVATIONS[key]
        if n_alpha:
            alpha = alphas.pop(0) if alphas else alpha
        if n_beta:
            beta = betas.pop(0) if betas else beta
        out.append(_Activation(key, alpha, beta, clip))
    if alphas or betas:
        raise node.unsupported(
            "activation_alpha" if alphas else "activation_beta",
            node.attr("activation_alpha" if alphas else "activation_beta"),
            f"has more values than the functions {names} take",
        )
    return [out[d * per_direction : (d + 1) * per_direction] for d in range(directions)]


def _at(x, index: int, axis: int = 0):
    """`x[index]` along `axis` (the axis removed)."""
    return op.squeeze(op.strided_slice(x, [axis], [index], [index + 1]), [axis])


def _gate_split(x, gates: int):
    """The `gates` equal parts of the last axis of `x`."""
    if gates == 1:
        return [x]
    parts = op.split(x, gates, axis=ndim_of(x) - 1)
    return [_item(parts, i) for i in range(gates)]


def _item(tuple_value, i: int):
    from .importer import active_importer

    return active_importer().emit(relax.TupleGetItem(tuple_value, i))


def _transposed(w):
    return op.permute_dims(w, [1, 0])


class _Cell:
    """The weights of one direction and the step function of its operator."""

    def __init__(
        self,
        node,
        kind: str,
        d: int,
        hidden: int,
        acts,
        peepholes,
        linear_before_reset: bool,
        input_forget: bool,
    ):
        self.kind, self.hidden, self.acts = kind, hidden, acts
        self.w = _at(node.input(1), d)  # [G*H, I]
        self.r = _at(node.input(2), d)  # [G*H, H]
        gates = KINDS[kind][0]
        self.wb = self.rb = None
        if node.has_input(3):
            b = _at(node.input(3), d)  # [2*G*H]
            self.wb = op.strided_slice(b, [0], [0], [gates * hidden])
            self.rb = op.strided_slice(b, [0], [gates * hidden], [2 * gates * hidden])
        self.peepholes = None
        if peepholes is not None:
            self.peepholes = _gate_split(_at(peepholes, d), 3)  # i, o, f
        self.linear_before_reset = linear_before_reset
        self.input_forget = input_forget
        if kind == "GRU":  # z and r see H R^T; the candidate sees (r . H) R_h^T or r . (H R_h^T)
            self.r_zr = _transposed(op.strided_slice(self.r, [0], [0], [2 * hidden]))
            self.r_h = _transposed(op.strided_slice(self.r, [0], [2 * hidden], [3 * hidden]))
            if self.rb is not None:
                self.rb_zr = op.strided_slice(self.rb, [0], [0], [2 * hidden])
                self.rb_h = op.strided_slice(self.rb, [0], [2 * hidden], [3 * hidden])
        else:
            self.r_t = _transposed(self.r)

    def project(self, x):
        """`X W^T + Wb` for every time step: [seq, batch, G*H]."""
        xw = op.matmul(x, _transposed(self.w))
        return op.add(xw, self.wb) if self.wb is not None else xw

    def step(self, xw, h, c):
        """One time step from the projected input `xw` [batch, G*H]: (new h, new c)."""
        acts = self.acts
        if self.kind == "RNN":
            pre = op.add(xw, op.matmul(h, self.r_t))
            if self.rb is not None:
                pre = op.add(pre, self.rb)
            return acts[0](pre), None
        if self.kind == "GRU":
            x_z, x_r, x_h = _gate_split(xw, 3)
            hr = op.matmul(h, self.r_zr)
            if self.rb is not None:
                hr = op.add(hr, self.rb_zr)
            h_z, h_r = _gate_split(hr, 2)
            z = acts[0](op.add(x_z, h_z))
            r = acts[0](op.add(x_r, h_r))
            if self.linear_before_reset:
                hh = op.matmul(h, self.r_h)
                if self.rb is not None:
                    hh = op.add(hh, self.rb_h)
                cand = op.add(x_h, op.multiply(r, hh))
            else:
                cand = op.add(x_h, op.matmul(op.multiply(r, h), self.r_h))
                if self.rb is not None:
                    cand = op.add(cand, self.rb_h)
            cand = acts[1](cand)
            one = _c(1, z)
            return op.add(op.multiply(op.subtract(one, z), cand), op.multiply(z, h)), None
        pre = op.add(xw, op.matmul(h, self.r_t))
        if self.rb is not None:
            pre = op.add(pre, self.rb)
        p_i, p_o, p_f = self.peepholes if self.peepholes is not None else (None, None, None)
        g_i, g_o, g_f, g_c = _gate_split(pre, 4)
        if p_i is not None:
            g_i = op.add(g_i, op.multiply(p_i, c))
            g_f = op.add(g_f, op.multiply(p_f, c))
        i = acts[0](g_i)
        f = op.subtract(_c(1, i), i) if self.input_forget else acts[0](g_f)
        c_new = op.add(op.multiply(f, c), op.multiply(i, acts[1](g_c)))
        if p_o is not None:
            g_o = op.add(g_o, op.multiply(p_o, c_new))
        o = acts[0](g_o)
        return op.multiply(o, acts[2](c_new, clip=False)), c_new  # the cell state is not clipped


def _recurrent(node):
    kind = node.op_type
    gates, defaults = KINDS[kind]
    node.attr("output_sequence", None)  # opset 1: whether Y is computed; graphc computes what is asked
    direction = node.expect("direction", "forward", "reverse", "bidirectional")
    directions = 2 if direction == "bidirectional" else 1
    layout = node.expect("layout", 0, 1) if node.version >= 14 else 0
    clip = node.attr("clip", None)
    if clip is not None and not clip > 0:
        raise node.unsupported("clip", clip, "must be positive")
    acts = _activations(node, len(defaults), directions, clip)
    linear_before_reset = bool(node.attr("linear_before_reset")) if kind == "GRU" else False
    input_forget = bool(node.attr("input_forget")) if kind == "LSTM" else False

    x = node.input(0)
    if ndim_of(x) != 3:
        raise node.error(f"X must have rank 3, got rank {ndim_of(x)}")
    if layout == 1:
        x = op.permute_dims(x, [1, 0, 2])
    seq_dim, batch, _ = shape_of(x)
    hidden = node.attr("hidden_size", None)
    w_shape = shape_of(node.input(1))
    if hidden is None:  # optional in the schema: the weights' rows give it
        if not hasattr(w_shape[1], "value"):
            raise node.error("hidden_size is not given and W's shape is symbolic")
        hidden = int(w_shape[1].value) // gates
    if hasattr(w_shape[0], "value") and int(w_shape[0].value) != directions:
        found = int(w_shape[0].value)
        raise node.error(f"W holds {found} direction(s), direction={direction!r} needs {directions}")
    if hasattr(w_shape[1], "value") and int(w_shape[1].value) != gates * hidden:
        found = int(w_shape[1].value)
        raise node.error(f"W has {found} rows; {gates} gate(s) of hidden_size={hidden} need {gates * hidden}")
    if not hasattr(seq_dim, "value"):
        raise node.error(
            f"a sequence length known only at run time ({seq_dim}) is not supported: graphc unrolls "
            f"recurrent layers (give X's length in shape_dict)"
        )
    length = int(seq_dim.value)
    if length > UNROLL_LIMIT:
        raise node.error(f"a sequence of {length} steps is not unrolled (limit {UNROLL_LIMIT})")

    def state(index: int):
        value = node.input(index)
        if value is None:
            return None
        return op.permute_dims(value, [1, 0, 2]) if layout == 1 else value

    init_h = state(5)
    init_c = state(6) if kind == "LSTM" else None
    peepholes = node.input(7) if kind == "LSTM" else None
    lens = node.input(4)
    masks = None
    if lens is not None:
        known = node.const(4)
        if known is None or not (known.reshape(-1) == length).all():
            lens = op.reshape(op.astype(lens, "int64"), shape_expr([batch, 1]))
            masks = [op.less(relax.const(t, "int64"), lens) for t in range(length)]

    ys, hs, cs = [], [], []
    for d in range(directions):
        cell = _Cell(node, kind, d, hidden, acts[d], peepholes, linear_before_reset, input_forget)
        xw = cell.project(x)
        zero = op.zeros(shape_expr([batch, hidden]), x.struct_info.dtype)
        h = _at(init_h, d) if init_h is not None else zero
        c = (_at(init_c, d) if init_c is not None else zero) if kind == "LSTM" else None
        reverse = direction == "reverse" or d == 1
        outs = [None] * length
        for t in reversed(range(length)) if reverse else range(length):
            h_new, c_new = cell.step(_at(xw, t), h, c)
            if masks is not None:
                outs[t] = op.where(masks[t], h_new, zero)
                h = op.where(masks[t], h_new, h)
                c = op.where(masks[t], c_new, c) if c is not None else None
            else:
                outs[t] = h = h_new
                c = c_new
        ys.append(outs)
        hs.append(h)
        cs.append(c)

    results = []
    if len(node.outputs) > 0 and node.outputs[0]:
        per_dir = [op.stack(outs, axis=0) for outs in ys]  # [seq, batch, H]
        y = op.stack(per_dir, axis=1)  # [seq, dirs, batch, H]
        results.append(op.permute_dims(y, [2, 0, 1, 3]) if layout == 1 else y)
    else:
        results.append(None)
    for values in (hs, cs)[: len(node.outputs) - 1]:
        if values[0] is None:
            results.append(None)
            continue
        v = op.stack(values, axis=0)  # [dirs, batch, H]
        results.append(op.permute_dims(v, [1, 0, 2]) if layout == 1 else v)
    return tuple(results)


converter("RNN", since=1)(_recurrent)
converter("GRU", since=1)(_recurrent)
converter("LSTM", since=1)(_recurrent)
