"""Load an experiment file: YAML with line numbers -> validated Experiment."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..controllers.base import ControllerSpec
from ..errors import ConfigError
from .fields import Context, Issue
from .schema import EXPERIMENT, NETWORK, defaults_of
from .source import compose, read_text


@dataclass
class Experiment:
    """A validated experiment file."""

    path: Path
    name: str
    description: str
    repetitions: int
    controllers: list[ControllerSpec]
    topologies: list[dict]
    workloads: list[dict]
    network: dict
    restart: str
    cooldown_s: float
    on_failure: str = "restart"
    cluster: dict | None = None      # the experimental cluster section, None on one machine
    lines: dict[str, int] = field(default_factory=dict)
    raw: dict = field(default_factory=dict)

    def line_of(self, key: str) -> int | None:
        """Line of a dotted key path in the file (for errors found after loading)."""
        return self.lines.get(key)

    def at(self, key: str, message: str) -> str:
        """'file:line: key: message' for a problem found after loading."""
        line = self.line_of(key)
        return f"{self.path}:{line}: {key}: {message}" if line else f"{self.path}: {key}: {message}"


class ExperimentErrors(ConfigError):
    """Several problems in one file, each on its own line."""

    def __init__(self, path: str, issues: list[Issue]):
        self.issues = issues
        first = issues[0]
        super().__init__(first.message, path=path, line=first.line, key=first.key)
        self.args = ("\n".join(i.render(path) for i in issues),)

    def __str__(self):
        return self.args[0]


def load_experiment(path: str | Path) -> Experiment:
    """Parse and validate an experiment file; ExperimentErrors lists every problem."""
    path = Path(path)
    return parse_experiment(read_text(path), path)


def parse_experiment(text: str, path: Path) -> Experiment:
    """Validate YAML text as an experiment."""
    node = compose(text, path)
    if node is None:
        raise ConfigError("the file is empty; an experiment needs name, controllers, topologies and workloads",
                          path=str(path))
    ctx = Context()
    value = EXPERIMENT.check(node, ctx, "")
    if value is not None:
        _check_labels(value, node, ctx)
    if ctx.issues:
        raise ExperimentErrors(str(path), ctx.issues)
    return _build(value, path, ctx)


def _check_labels(value: dict, node, ctx: Context) -> None:
    """Controllers, topologies and workloads need distinct names (they key the results)."""
    for section, keyname, default in (("controllers", "label", "kind"),
                                      ("topologies", "label", None),
                                      ("workloads", "name", None)):
        seen: dict[str, int] = {}
        for i, item in enumerate(value[section]):
            name = item.get(keyname) or (item[default] if default else None)
            if name is None:
                continue
            if name in seen:
                line = ctx.lines.get(f"{section}[{i}].{keyname}") or ctx.lines.get(f"{section}[{i}].{default}")
                ctx.issues.append(Issue(line, f"{section}[{i}]",
                                        f"'{name}' is used by {section}[{seen[name]}] too; give each a distinct {keyname}"))
            seen[name] = i


def _build(value: dict, path: Path, ctx: Context) -> Experiment:
    network = value["network"] or defaults_of(NETWORK)
    controllers = []
    for c in value["controllers"]:
        controllers.append(ControllerSpec(
            kind=c["kind"], label=c["label"] or c["kind"], openflow=c["openflow"] or value["openflow"],
            app=c["app"], cpus=c["cpus"], fail_mode=c["fail_mode"], host=c["host"], port=c["port"], rest_port=c["rest_port"],
            rest_url=c["rest_url"], options=dict(c["options"] or {})))
    return Experiment(path=path, name=value["name"], description=value["description"],
                      repetitions=value["repetitions"], controllers=controllers,
                      topologies=value["topologies"], workloads=value["workloads"], network=network,
                      restart=value["restart"], cooldown_s=value["cooldown_s"], on_failure=value["on_failure"],
                      cluster=value["cluster"], lines=ctx.lines, raw=value)
