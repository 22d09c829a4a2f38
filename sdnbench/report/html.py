"""The HTML report: one self-contained page (figures inside as SVG data URIs) plus PNG and SVG files.

`sdnbench report RUN` writes it with `write()`; `sdnbench results --format html`
prints the same page. The page needs no network: no scripts, fonts or styles
from elsewhere.
"""

from __future__ import annotations

from pathlib import Path

from .base import Report

PAGE_NAME = "report.html"
FIGURES_DIR = "figures"
#: On screen a figure is drawn larger than in print (its fonts are 7-8 pt at column width).
SCREEN_PX_PER_IN = 150
SECTIONS = (("bars", "Comparison per metric"), ("southbound", "Southbound capacity"),
            ("series", "Per-interval series"), ("delay", "Per-packet delay"))


def _template():
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("sdnbench.report", "templates"),
                             autoescape=True, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2")


class HtmlReport(Report):
    name = "html"
    description = "one self-contained HTML page with figures (`sdnbench report` also writes PNG and SVG)"

    def render(self, store, comparison, metrics=None, marks=None) -> str:
        from .figures import build_plots

        return self.page(store, comparison, build_plots(store, comparison, metrics), {}, metrics)

    def write(self, store, comparison, outdir: Path, metrics=None) -> Path:
        """Write report.html and figures/<name>.png|.svg into outdir; returns the page's path."""
        from .figures import build_plots

        outdir.mkdir(parents=True, exist_ok=True)
        plots = build_plots(store, comparison, metrics)
        files = {p.name: {kind: path.relative_to(outdir).as_posix()
                          for kind, path in p.save(outdir / FIGURES_DIR).items()} for p in plots}
        page = outdir / PAGE_NAME
        page.write_text(self.page(store, comparison, plots, files, metrics))
        return page

    def page(self, store, comparison, plots, files: dict, metrics=None) -> str:
        """The HTML text; files maps a plot's name to its PNG and SVG paths beside the page."""
        from ..analysis.stress_table import legend, stress_tables
        from ..analysis.validity import cell_health
        from . import page as parts

        health = cell_health(store)
        campaign = store.campaign() or {}
        numbered, sections = 0, []
        for key, title in SECTIONS:
            figures = []
            for p in (p for p in plots if p.section == key):
                numbered += 1
                figures.append({"number": numbered, "title": p.title, "caption": p.caption, "uri": p.data_uri(),
                                "files": files.get(p.name, {}), "width_px": round(p.width_in() * SCREEN_PX_PER_IN)})
            if figures:
                sections.append({"title": title, "figures": figures})
        return _template().render(
            name=campaign.get("name", "run"), facts=parts.run_facts(store, comparison), sections=sections,
            tables=parts.metric_tables(comparison, health, metrics), marked=parts.marked_cells(health),
            stress=stress_tables(store), stress_legend=legend(), environment=parts.environment(store),
            experiment=campaign.get("experiment_yaml", ""))


REPORT = HtmlReport()
