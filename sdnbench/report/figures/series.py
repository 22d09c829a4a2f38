"""Per-interval series: one figure per row, stacked panels (throughput, delay, errors), controllers as colours.

Flows of a trial are summed (rates, counts) or averaged (delays) per interval;
the line is the mean over repetitions and the band their minimum to maximum.
Rows that differ only in their phase (a northbound workload's load, overload,
dos and ddos) are drawn end to end on one time axis, with the phase
boundaries and the attacks' planned windows marked; events of the trials
(faults injected, switches reconnected) are dotted lines.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

from ...analysis.compare import row_key
from ...results.store import ResultStore
from .plot import Plot
from .style import COLUMN_IN, new_figure, scaled, unit_and_meaning, wrap

#: Series drawn as panels, in this order, at most MAX_PANELS of those a row has, with a short axis label
#: (a panel is a third of a column high: the caption gives the catalog's description).
PANELS = {"throughput_bps": "throughput", "throughput_rps": "successful requests", "responses_per_s": "answers",
          "failed": "failed requests", "owd_mean_ms": "one-way delay", "rtt_mean_ms": "round-trip time",
          "latency_p50_ms": "median latency", "jitter_ms": "jitter"}
#: Fewer points than this: each is marked (a line alone hides how few there are).
FEW_POINTS = 20
MAX_PANELS = 3
ATTACK_PHASES = ("dos", "ddos")

# (row without phase) -> phase -> controller -> name -> repetition -> t_s -> values of the flows
Points = dict


def _additive(name: str) -> bool:
    """Rates and counts add up over a trial's flows; delays are averaged."""
    unit = unit_and_meaning(name)[0]
    return unit.endswith("/s") or unit in ("requests", "packets")


def collect(store: ResultStore) -> Points:
    """Every stored series point of the panel names, grouped for drawing."""
    tree: Points = defaultdict(lambda: defaultdict(lambda: defaultdict(lambda: defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))))))
    for ctrl, topo, wl, params, rep, _flow, t_s, name, value in store.all_series():
        if name not in PANELS or value is None:
            continue
        p = json.loads(params)
        phase = str(p.pop("phase", ""))
        tree[row_key(topo, wl, p)][phase][ctrl][name][rep][t_s].append(value)
    return tree


def attack_windows(store: ResultStore) -> dict[tuple, list[tuple[float, float]]]:
    """(row without phase, phase) -> planned (start, stop) of its attacks, seconds into the phase."""
    out: dict[tuple, list[tuple[float, float]]] = {}
    for t in store.trials():
        phase = t.params.get("phase")
        if t.status != "ok" or phase not in ATTACK_PHASES:
            continue
        key = (row_key(t.topology, t.workload, {k: v for k, v in t.params.items() if k != "phase"}), phase)
        for name, content in store.raw(t.key).items():
            if name.startswith("attack") and name.endswith(".json"):
                a = json.loads(content)
                if a.get("planned_start_s") is not None and a.get("planned_stop_s") is not None:
                    window = (float(a["planned_start_s"]), float(a["planned_stop_s"]))
                    if window not in out.setdefault(key, []):
                        out[key].append(window)
    return out


def event_times(store: ResultStore) -> dict[tuple, dict[str, float]]:
    """(row without phase, phase) -> event kind -> its median time, seconds into the workload.

    Events (faults injected, switches reconnected) of every repetition and controller are folded
    into one time per kind: one dotted line each keeps the figure readable; the store has them all.
    """
    times: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for ctrl, topo, wl, params, rep, t_s, kind, detail in store.all_events():
        p = json.loads(params)
        phase = str(p.pop("phase", ""))
        times[(row_key(topo, wl, p), phase)][kind].append(t_s)
    return {key: {kind: statistics.median(ts) for kind, ts in kinds.items()} for key, kinds in times.items()}


def _phase_lengths(phases: dict) -> dict[str, float]:
    """Seconds each phase spans: its last interval's start plus one interval, the longest over controllers."""
    out = {}
    for phase, by_ctrl in phases.items():
        ts = sorted({t for names in by_ctrl.values() for reps in names.values() for pts in reps.values()
                     for t in pts})
        step = min((b - a for a, b in zip(ts, ts[1:]) if b > a), default=1.0)
        out[phase] = ts[-1] + step if ts else 0.0
    return out


def _line(reps: dict, additive: bool) -> tuple[list[float], list[float], list[float], list[float]]:
    """(t, mean, low, high) over repetitions of per-interval values combined over flows."""
    per_t: dict[float, list[float]] = defaultdict(list)
    for pts in reps.values():
        for t, vals in pts.items():
            per_t[t].append(sum(vals) if additive else statistics.fmean(vals))
    ts = sorted(per_t)
    return (ts, [statistics.fmean(per_t[t]) for t in ts], [min(per_t[t]) for t in ts],
            [max(per_t[t]) for t in ts])


def series_plot(row, phases: dict, controllers: list[str], palette: dict[str, str],
                marks: tuple[dict, dict], index: int) -> Plot | None:
    """The stacked series figure of one row (all of its phases)."""
    names = [n for n in PANELS if any(n in by_name for by_ctrl in phases.values() for by_name in by_ctrl.values())]
    names = names[:MAX_PANELS]
    if not names:
        return None
    lengths = _phase_lengths(phases)
    offsets, at = {}, 0.0
    for phase in phases:
        offsets[phase], at = at, at + lengths[phase]
    fig, axes = new_figure(COLUMN_IN, 1.0 + 1.15 * len(names), rows=len(names), sharex=True)
    ctrls = [c for c in controllers if any(c in by_ctrl for by_ctrl in phases.values())]
    for ax, name in zip(axes, names):
        unit = unit_and_meaning(name)[0]
        lines = {(phase, c): _line(phases[phase][c][name], _additive(name))
                 for phase in phases for c in ctrls if name in phases[phase].get(c, {})}
        peak = max((v for _, _, _, hi in lines.values() for v in hi), default=0.0)
        factor, shown = scaled(unit, peak)
        labelled = set()
        for (phase, c), (ts, mean, lo, hi) in lines.items():
            x = [t + offsets[phase] for t in ts]
            ax.plot(x, [v * factor for v in mean], color=palette[c], linewidth=1.0,
                    marker="o" if len(x) < FEW_POINTS else None, markersize=2.5, label=None if c in labelled else c)
            labelled.add(c)
            if any(a != b for a, b in zip(lo, hi)):
                ax.fill_between(x, [v * factor for v in lo], [v * factor for v in hi], color=palette[c],
                                alpha=0.2, linewidth=0)
        ax.set_ylabel(wrap(f"{PANELS[name]} [{shown}]" if shown else PANELS[name], 20))
        if all(v >= 0 for _, _, lo, _ in lines.values() for v in lo):
            ax.set_ylim(bottom=0)
        _mark_phases(ax, phases, offsets, marks, row, first=ax is axes[0])
    fig.align_ylabels(axes)
    axes[-1].set_xlabel("time [s]" + (", phases end to end" if len(phases) > 1 else ""))
    handles = {label: h for ax in axes for h, label in zip(*ax.get_legend_handles_labels())}
    fig.legend(list(handles.values()), list(handles), loc="outside upper center", ncol=min(len(handles), 4),
               handlelength=1.5)
    topology, workload, point = row
    where = " ".join(x for x in (workload, "on" if topology != "-" else "", topology if topology != "-" else "",
                                 point) if x)
    panels = "; ".join(f"{PANELS[n]}: {unit_and_meaning(n)[1]}" for n in names)
    caption = (f"Per-interval series of {where} ({panels}). Lines: mean over repetitions; band: smallest to "
               f"largest repetition; a trial's flows summed (rates, counts) or averaged (delays).")
    if len(phases) > 1:
        caption += f" Phases {', '.join(phases)} end to end; dashed lines: phase boundaries."
    attacks, events = marks
    if any((row, p) in attacks for p in phases):
        caption += " Shaded: the attack's planned window."
    if any((row, p) in events for p in phases):
        caption += " Dotted: events (faults injected, switches reconnected), median time over repetitions."
    return Plot(f"series-{index:02d}", "series", where, caption, fig,
                {"panels": names, "phases": list(phases), "controllers": ctrls})


def _mark_phases(ax, phases: dict, offsets: dict, marks: tuple[dict, dict], row, first: bool) -> None:
    """Dashed phase boundaries (named on the first panel), shaded attack windows, dotted events."""
    attacks, events = marks
    for phase in phases:
        if offsets[phase] > 0:
            ax.axvline(offsets[phase], color="#555555", linestyle="--", linewidth=0.7)
        if first and phase and len(phases) > 1:
            _label(ax, offsets[phase], phase)
        for start, stop in attacks.get((row, phase), []):
            ax.axvspan(offsets[phase] + start, offsets[phase] + stop, color="#999999", alpha=0.18, linewidth=0,
                       label="attack (planned)")
        for kind, t in events.get((row, phase), {}).items():
            ax.axvline(offsets[phase] + t, color="#222222", linestyle=":", linewidth=0.8)
            if first:
                _label(ax, offsets[phase] + t, kind.replace("_", " "), along=True)


def _label(ax, x: float, text: str, along: bool = False) -> None:
    """A small label at the top of the axes: right of x, or along the line at x (down from the top)."""
    ax.annotate(text, (x, 1), xycoords=("data", "axes fraction"), xytext=(-1 if along else 2, -2),
                textcoords="offset points", ha="right" if along else "left", va="top", rotation=90 if along else 0,
                fontsize=6, color="#555555", bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 0.5})


def series_plots(store: ResultStore, controllers: list[str], palette: dict[str, str]) -> list[Plot]:
    """The series figures of every row that stored a series."""
    marks = (attack_windows(store), event_times(store))
    plots = []
    for row, phases in collect(store).items():
        plot = series_plot(row, phases, controllers, palette, marks, len(plots) + 1)
        if plot:
            plots.append(plot)
    return plots

