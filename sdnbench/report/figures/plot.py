"""One figure of a report: the matplotlib Figure, its title and caption, and how it is saved."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .style import paper_style

#: Nothing that changes between two renderings of the same data goes into the files.
_SVG_METADATA = {"Date": None, "Creator": "sdnbench"}
_PNG_METADATA = {"Software": "sdnbench"}


@dataclass
class Plot:
    """A finished figure; `facts` says what was drawn (counts of bars, marked cells...) for tests and captions."""

    name: str                 # file stem, e.g. bars-owd_mean_ms
    section: str              # bars, series, delay, southbound
    title: str
    caption: str
    figure: Any               # matplotlib.figure.Figure
    facts: dict = field(default_factory=dict)
    _svg: str | None = field(default=None, repr=False)

    def svg(self) -> str:
        """The figure as SVG text (drawn once: the page and the file share it)."""
        if self._svg is None:
            buf = io.StringIO()
            with paper_style():   # some settings (ids, fonts, dpi, bbox) are read when saving
                self.figure.savefig(buf, format="svg", metadata=_SVG_METADATA)
            self._svg = buf.getvalue()
        return self._svg

    def png(self) -> bytes:
        """The figure as PNG bytes (200 dpi: sharp at column width in print)."""
        buf = io.BytesIO()
        with paper_style():
            self.figure.savefig(buf, format="png", metadata=_PNG_METADATA)
        return buf.getvalue()

    def data_uri(self) -> str:
        """The SVG as a data: URI, so an HTML page holds the figure itself (no file, no network)."""
        return "data:image/svg+xml;base64," + base64.b64encode(self.svg().encode()).decode()

    def width_in(self) -> float:
        """The figure's width in inches, as drawn for print."""
        return float(self.figure.get_size_inches()[0])

    def save(self, directory: Path) -> dict[str, Path]:
        """Write <name>.png and <name>.svg into directory; returns both paths."""
        directory.mkdir(parents=True, exist_ok=True)
        paths = {"png": directory / f"{self.name}.png", "svg": directory / f"{self.name}.svg"}
        paths["png"].write_bytes(self.png())
        paths["svg"].write_text(self.svg())
        return paths
