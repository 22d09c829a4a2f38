"""grid: rows x columns switches, each linked to its right and lower neighbour."""

from .graph import LinkParams, TopologyGraph
from .kind import MAX_HOSTS, TopologyKind, size_param


def build(rows: int, columns: int, hosts_per_switch: int, hosts: int | None,
          edge: LinkParams, core: LinkParams) -> TopologyGraph:
    """Switches in row order; hosts either per switch or a total dealt out in row order."""
    g = TopologyGraph("grid")
    cell = [[g.add_switch() for _ in range(columns)] for _ in range(rows)]
    for r in range(rows):
        for c in range(columns):
            if c + 1 < columns:
                g.add_link(cell[r][c], cell[r][c + 1], core)
            if r + 1 < rows:
                g.add_link(cell[r][c], cell[r + 1][c], core)
    order = [s for row in cell for s in row]
    if hosts is None:
        attach = [s for s in order for _ in range(hosts_per_switch)]
    else:
        attach = [order[i % len(order)] for i in range(hosts)]
    for s in attach:
        g.add_link(g.add_host(), s, edge, "edge")
    return g


KIND = TopologyKind(
    name="grid", doc="rows x columns switches, each linked to its neighbours.",
    params={
        "rows": size_param("grid rows"),
        "columns": size_param("grid columns"),
        "hosts_per_switch": size_param("hosts on each switch", 1, minimum=0, maximum=MAX_HOSTS),
        "hosts": size_param("total hosts instead: one per switch in row order, wrapping", None,
                            maximum=MAX_HOSTS),
    },
    build=lambda p, edge, core, _: build(p["rows"], p["columns"], p["hosts_per_switch"], p.get("hosts"),
                                         edge, core),
    label_params=("rows", "columns"),
    counts=lambda p: (p["rows"] * p["columns"],
                      p.get("hosts") or p["rows"] * p["columns"] * p["hosts_per_switch"],
                      p["rows"] * (p["columns"] - 1) + p["columns"] * (p["rows"] - 1)))
