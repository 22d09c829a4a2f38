"""The `sweep:` field type: parameters to vary, each combination a trial."""

from __future__ import annotations

import math

from .fields import Any_, Field, ListOf, Mapping, Type

#: Combinations one sweep may give. Each is a trial per controller, topology and
#: repetition; a rate curve of 50 points by 20 sizes is 1,000. The plan's total
#: bound (sdnbench.runner.plan.MAX_TRIALS) still applies.
MAX_SWEEP_POINTS = 10_000


class Sweep(Type):
    """Fields to vary: each key one of `sweepable`, each value a list of that field's values."""

    def __init__(self, fields: dict[str, Field], sweepable: tuple[str, ...]):
        self.fields, self.sweepable = fields, sweepable

    def check(self, node, ctx, key):
        inner = Mapping(ListOf(Any_(), max_items=MAX_SWEEP_POINTS),
                        keys=lambda k: None if k in self.sweepable else
                        f"cannot sweep '{k}'; sweepable: {', '.join(self.sweepable)}")
        if inner.check(node, ctx, key) is None:
            return None
        points = math.prod(len(vnode.value) for _, vnode in node.value)
        if points > MAX_SWEEP_POINTS:
            ctx.error(node, key, f"{' x '.join(str(len(v.value)) for _, v in node.value)} = {points:,} "
                                 f"combinations; at most {MAX_SWEEP_POINTS:,} (each is a trial per controller, "
                                 f"topology and repetition)")
            return None
        out = {}
        for knode, vnode in node.value:
            ftype = self.fields[knode.value].type
            values = [ftype.check(item, ctx, f"{key}.{knode.value}[{i}]") for i, item in enumerate(vnode.value)]
            if any(v is None for v in values):
                return None
            out[knode.value] = values
        return out

    def jsonschema(self):
        return {"type": "object", "propertyNames": {"enum": list(self.sweepable)},
                "additionalProperties": {"type": "array", "minItems": 1, "maxItems": MAX_SWEEP_POINTS}}
