"""How every figure looks: Okabe-Ito colours per controller, column-width sizes, labels with units.

Figures are matplotlib `Figure` objects made without pyplot (no global state,
no display), drawn inside `paper_style()`.
"""

from __future__ import annotations

import contextlib
import math

from ...metrics import HIGHER, LOWER, describe

#: Okabe & Ito's colour-blind-safe palette, yellow late (it is faint on white).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
#: Hatching of a cell that must not be trusted as it stands (analysis.validity).
MARKED_HATCH = "////"

COLUMN_IN = 3.5     # one column of a two-column paper
PAGE_IN = 7.16      # both columns

_RC = {
    "font.size": 8, "axes.labelsize": 8, "axes.titlesize": 8, "xtick.labelsize": 7, "ytick.labelsize": 7,
    "legend.fontsize": 7, "legend.frameon": False, "axes.spines.top": False, "axes.spines.right": False,
    "axes.grid": True, "axes.grid.axis": "y", "grid.color": "#dddddd", "grid.linewidth": 0.5,
    "axes.axisbelow": True, "hatch.linewidth": 0.6, "savefig.dpi": 200,
    # Stable ids and no date in SVG: a re-rendered report differs only where the data does.
    "svg.hashsalt": "sdnbench", "svg.fonttype": "path",
}


@contextlib.contextmanager
def paper_style():
    """matplotlib settings of every sdnbench figure, for the figures made inside."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        yield


def new_figure(width_in: float = COLUMN_IN, height_in: float = 2.4, rows: int = 1, sharex: bool = False):
    """A Figure with `rows` stacked axes (a list), not registered with pyplot."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width_in, height_in), layout="constrained")
    axes = fig.subplots(rows, 1, sharex=sharex, squeeze=False)[:, 0]
    return fig, list(axes)


def colours(controllers: list[str]) -> dict[str, str]:
    """One colour per controller, in the run's order, the same in every figure."""
    return {c: OKABE_ITO[i % len(OKABE_ITO)] for i, c in enumerate(controllers)}


def unit_and_meaning(name: str) -> tuple[str, str, str]:
    """(unit, description, better) of a metric or series name, from the catalog."""
    info = describe(name)
    return info.unit, info.description, info.better


def scaled(unit: str, peak: float) -> tuple[float, str]:
    """(factor, unit) that keep tick labels short: a peak of 4.05e5 bit/s gives (1e-3, 'kbit/s')."""
    if not peak or not math.isfinite(peak):
        return 1.0, unit
    if unit == "us" and peak >= 1e3:
        return 1e-3, "ms"
    if unit == "ms" and peak >= 1e4:
        return 1e-3, "s"
    if unit.endswith("/s") or unit in ("bytes", "packets", "requests", "messages"):
        glue = "" if unit.startswith(("bit", "byte")) else " "
        for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if peak >= factor:
                return 1 / factor, f"{prefix}{glue}{unit}"
    return 1.0, unit


def axis_label(name: str, unit: str, with_direction: bool = True, width: int = 34) -> str:
    """'mean one-way delay [ms]' wrapped to fit beside a column-high axis, then '(lower is better)'."""
    _, desc, better = unit_and_meaning(name)
    text = wrap(f"{desc} [{unit}]" if unit else desc, width)
    if with_direction and better in (LOWER, HIGHER):
        text += f"\n({better} is better)"
    return text


def wrap(text: str, width: int = 60) -> str:
    """text broken into lines of at most width characters (labels that must fit a column)."""
    import textwrap

    return "\n".join(textwrap.wrap(text, width)) or text
