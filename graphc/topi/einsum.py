"""Einstein summation and the outer product as TE computes, with the subscript parser they share
with Relax's struct-info inference.

Subscripts follow numpy: letters name dimensions, `...` stands for broadcast leading
dimensions, `->` gives the output (left out: `...` then the letters used once, sorted).
Letters missing from the output are summed over; so are the `...` dimensions when the output
leaves `...` out (as torch.einsum does). A size-1 dimension broadcasts against its letter's size.

>>> parse_subscripts("ij,jk", 2)
(['ij', 'jk'], 'ik')
>>> parse_subscripts("b...i,b...i->b...", 2)
(['b...i', 'b...i'], 'b...')
>>> from graphc import te
>>> a = te.placeholder((2, 3), "float32", name="a")
>>> b = te.placeholder((3, 4), "float32", name="b")
>>> [int(d) for d in einsum("ij,jk->ik", a, b).shape]  # topi.einsum
[2, 4]
"""

from __future__ import annotations

from .. import te
from ..tir import expr as _e
from .broadcast import broadcast_shape

__all__ = ["einsum", "outer"]

ELLIPSIS = "..."


def _check_term(term: str, subscripts: str, where: str) -> None:
    letters = term.replace(ELLIPSIS, "", 1)
    if ELLIPSIS in letters or "." in letters:
        raise ValueError(
            f"einsum subscripts {subscripts!r}: {where} {term!r} has a '.' that is not one '...'")
    bad = [c for c in letters if not c.isascii() or not c.isalpha()]
    if bad:
        raise ValueError(f"einsum subscripts {subscripts!r}: {where} {term!r} has {bad[0]!r}; "
                         "use letters a-z, A-Z and one '...'")


def parse_subscripts(subscripts: str, num_operands: int) -> tuple[list[str], str]:
    """The input terms and the output term of `subscripts` (the implicit output made explicit).

    Raises ValueError saying what is wrong with the string.
    """
    text = subscripts.replace(" ", "")
    if text.count("->") > 1:
        raise ValueError(f"einsum subscripts {subscripts!r} have more than one '->'")
    lhs, arrow, output = text.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != num_operands:
        raise ValueError(f"einsum subscripts {subscripts!r} name {len(inputs)} operand(s), "
                         f"got {num_operands}")
    for k, term in enumerate(inputs):
        _check_term(term, subscripts, f"operand {k}")
    used = "".join(t.replace(ELLIPSIS, "") for t in inputs)
    if not arrow:
        once = sorted(c for c in set(used) if used.count(c) == 1)
        output = (ELLIPSIS if any(ELLIPSIS in t for t in inputs) else "") + "".join(once)
    _check_term(output, subscripts, "the output")
    letters = output.replace(ELLIPSIS, "")
    for c in letters:
        if letters.count(c) > 1:
            raise ValueError(f"einsum subscripts {subscripts!r}: output letter {c!r} appears twice")
        if c not in used:
            raise ValueError(f"einsum subscripts {subscripts!r}: output letter {c!r} is in no operand")
    return inputs, output


def split_term(term: str, ndim: int) -> tuple[list[str], int]:
    """Each dimension's label for an operand of rank `ndim` (`...` dims labelled "" ) and how many
    dimensions `...` covers; ValueError if the rank does not fit the term."""
    head, has_ellipsis, tail = term.partition(ELLIPSIS)
    fixed = len(head) + len(tail)
    if (has_ellipsis and ndim < fixed) or (not has_ellipsis and ndim != fixed):
        want = f"at least {fixed}" if has_ellipsis else f"{fixed}"
        raise ValueError(f"einsum term {term!r} needs {want} dimension(s), got {ndim}")
    extra = ndim - fixed
    return list(head) + [""] * extra + list(tail), extra


def _is_one(d) -> bool:
    return isinstance(d, _e.IntImm) and d.value == 1


def einsum(subscripts: str, *operands: te.Tensor) -> te.Tensor:
    """The Einstein summation of `operands` described by `subscripts` (TVM's topi signature)."""
    inputs, output = parse_subscripts(subscripts, len(operands))
    labels, sizes, ellipsis_shapes = [], {}, []
    for term, t in zip(inputs, operands):
        dims, extra = split_term(term, len(t.shape))
        labels.append(dims)
        start = dims.index("") if extra else 0
        ellipsis_shapes.append(tuple(t.shape[start:start + extra]))
        for c, d in zip(dims, t.shape):
            if c and (c not in sizes or _is_one(sizes[c])):
                sizes[c] = d
    nonempty = [s for s in ellipsis_shapes if s]
    batch = broadcast_shape(*nonempty) if nonempty else ()

    out_head, out_has_ellipsis, out_tail = output.partition(ELLIPSIS)
    out_shape = (tuple(sizes[c] for c in out_head) + (batch if out_has_ellipsis else ())
                 + tuple(sizes[c] for c in out_tail))
    summed = sorted({c for term in inputs for c in term.replace(ELLIPSIS, "")} - set(output))

    def f(*index):
        head = dict(zip(out_head, index[:len(out_head)]))
        tail = dict(zip(out_tail, index[len(index) - len(out_tail):]))
        var = {**head, **tail}
        raxes = [te.reduce_axis((_e.const(0, sizes[c].dtype), sizes[c]), name=f"k_{c}") for c in summed]
        var.update((c, r.var) for c, r in zip(summed, raxes))
        if out_has_ellipsis:
            batch_index = list(index[len(out_head):len(out_head) + len(batch)])
        else:
            extra_axes = [
                te.reduce_axis((_e.const(0, d.dtype), d), name=f"k_e{k}") for k, d in enumerate(batch)
            ]
            raxes += extra_axes
            batch_index = [r.var for r in extra_axes]
        product = None
        for dims, t, eshape in zip(labels, operands, ellipsis_shapes):
            own_batch = batch_index[len(batch) - len(eshape):] if eshape else []
            it = iter(own_batch)
            idx, k_batch = [], len(batch) - len(eshape)
            for c, d in zip(dims, t.shape):
                if c:
                    i = var[c]
                    idx.append(_e.const(0, i.dtype) if _is_one(d) and not _is_one(sizes[c]) else i)
                else:
                    i = next(it)
                    idx.append(_e.const(0, i.dtype) if _is_one(d) and not _is_one(batch[k_batch]) else i)
                    k_batch += 1
            term = t(*idx)
            product = term if product is None else product * term
        return te.sum(product, axis=raxes) if raxes else product

    return te.compute(out_shape, f, name="T_einsum")


def outer(a: te.Tensor, b: te.Tensor) -> te.Tensor:
    """`out[i, j] = a[i] * b[j]` for 1-d `a` and `b`."""
    return te.compute((a.shape[0], b.shape[0]), lambda i, j: a(i) * b(j), name="T_outer")
