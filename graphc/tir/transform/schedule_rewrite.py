"""Shared machinery of the lowering passes that rewrite a function with `tir.Schedule`
primitives (PromoteReductionAccumulator, PadConflictingOperandTile): their options and the
find-apply loop that leaves a site alone when a primitive refuses it."""

from __future__ import annotations

from collections.abc import Callable

from ...errors import GraphcError, ScheduleError

OPTIONS = ("enabled", "max_bytes")


def check_options(pass_name: str, options: dict) -> None:
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise GraphcError(f"{pass_name} options are {', '.join(OPTIONS)}; got unknown {', '.join(unknown)}")


def configured_options(pass_name: str, config_key: str, ctx, overrides: dict) -> dict:
    """`ctx.config[config_key]` with the pass's own `overrides` on top, both checked."""
    options = dict(ctx.config.get(config_key, {}))
    check_options(pass_name, options)
    options.update(overrides)
    return options


def rewrite_each(func, find: Callable, key: Callable, apply: Callable):
    """Apply `apply(func, site)` to the sites `find(func)` reports, one at a time (a rewrite
    changes the function, so sites are found again), until none is left; a site whose
    primitives raise ScheduleError stays as it was and is not tried again."""
    declined: set = set()
    while True:
        todo = [site for site in find(func) if key(site) not in declined]
        if not todo:
            return func
        try:
            func = apply(func, todo[0])
        except ScheduleError:
            pass  # the primitives refused: this site stays as it was
        declined.add(key(todo[0]))
