"""The figures of a run's report, drawn with matplotlib from the store (never from tools' text output).

Every module here turns stored results into `Plot`s: bars (one per metric),
series (one per row), delay (per-packet delay distributions), southbound
(responses/s and latency percentiles). matplotlib is imported only here, when
a report is drawn, so the command line starts without it.
"""

from __future__ import annotations

from ...metrics import default_shown
from .plot import Plot


def build_plots(store, comparison, metrics: list[str] | None = None) -> list[Plot]:
    """All figures of a run, in report order; metrics limits the bar figures (None: the default ones)."""
    from ...analysis.validity import cell_health
    from .bars import bar_plot
    from .delay import delay_plots
    from .series import series_plots
    from .southbound import southbound_plot
    from .style import colours, paper_style

    cells, controllers, rows = comparison
    health = cell_health(store)
    palette = colours(controllers)
    present = {c.metric for c in cells}
    chosen = metrics or [m for m in default_shown() if m in present]
    with paper_style():
        plots = [p for p in (bar_plot(m, cells, controllers, rows, health, palette) for m in chosen) if p]
        if not metrics:
            plots += series_plots(store, controllers, palette)
            plots += delay_plots(store, controllers, palette)
            sb = southbound_plot(store, cells, controllers, rows, health, palette)
            plots += [sb] if sb else []
    return plots


__all__ = ["Plot", "build_plots"]
