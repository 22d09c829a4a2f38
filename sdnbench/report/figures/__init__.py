"""The figures of a run's report, drawn with matplotlib from the store (never from tools' text output).

Every module here turns stored results into `Plot`s: bars (one per metric),
series (one per row), delay (per-packet delay distributions), southbound
(responses/s and latency percentiles). matplotlib is imported only here, when
a report is drawn, so the command line starts without it.
"""

from __future__ import annotations

from .plot import Plot


def build_plots(store, comparison, metrics: list[str] | None = None) -> list[Plot]:
    """All figures of a run, in report order; metrics limits the bar figures (None: the default ones)."""
    from ...analysis.table import shown_metrics
    from ...analysis.validity import cell_health
    from .bars import bar_plot
    from .delay import delay_plots
    from .series import series_plots
    from .southbound import southbound_plot
    from .style import colours, paper_style

    cells, controllers, rows = comparison
    health = cell_health(store)
    palette = colours(controllers)
    with paper_style():
        plots = [bar_plot(m, cells, controllers, rows, health, palette) for m in shown_metrics(cells, metrics)]
        plots += series_plots(store, controllers, palette)
        plots += delay_plots(store, controllers, palette)
        plots.append(southbound_plot(store, cells, controllers, rows, health, palette))
    return [p for p in plots if p]


__all__ = ["Plot", "build_plots"]
