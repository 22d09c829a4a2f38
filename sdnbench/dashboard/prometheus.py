"""The run's state in Prometheus' text format (the dashboard server's /metrics), read at scrape time."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from .live import LiveRun

CELL_LABELS = ["controller", "topology", "workload", "params", "metric", "unit"]


class LiveCollector:
    """Gauges of one LiveRun: progress, the running trial, the latest series values and the cells."""

    def __init__(self, live: LiveRun):
        self.live = live

    def collect(self):
        """The metric families as they are now."""
        p = self.live.progress()
        for name, key, help_ in (("trials_planned", "total", "trials the campaign will run"),
                                 ("trials_done", "done", "trials stored so far"),
                                 ("trials_failed", "failed", "trials stored as failed"),
                                 ("seconds_left", "left_s", "estimated seconds until the campaign ends"),
                                 ("elapsed_seconds", "elapsed_s", "seconds since the campaign started")):
            if p[key] is not None:
                yield GaugeMetricFamily(f"sdnbench_{name}", help_, value=p[key])
        yield GaugeMetricFamily("sdnbench_finished", "1 once no more trials will run", value=float(p["finished"]))
        snap = self.live.snapshot()
        running = GaugeMetricFamily("sdnbench_trial_running", "1 for the trial running now", labels=["trial"])
        if snap["current"]:
            running.add_metric([snap["current"]["label"]], 1.0)
        yield running
        last = GaugeMetricFamily("sdnbench_series_last", "last per-second value of the latest stored trial",
                                 labels=["trial", "flow", "metric", "unit"])
        for (label, flow, name), value in sorted(self.live.last_values.items()):
            last.add_metric([label, flow, name, snap["units"].get(name, "")], value)
        yield last
        for stat in ("mean", "ci95"):
            fam = GaugeMetricFamily(f"sdnbench_cell_{stat}", f"{stat} of a finished cell over its repetitions",
                                    labels=CELL_LABELS)
            for row in snap["cells"]:
                if row[stat] is not None:
                    fam.add_metric([str(row[k]) for k in CELL_LABELS], row[stat])
            yield fam


def metrics_text(live: LiveRun) -> bytes:
    """The exposition text of live's gauges."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LiveCollector(live))
    return generate_latest(registry)
