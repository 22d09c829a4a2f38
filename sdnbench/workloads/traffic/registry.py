"""Traffic engines by name: "native", "ditg", "iperf3", "ping".

An engine is one module of this package named after the engine, defining a
TrafficEngine subclass whose `name` is the module's name; ENGINE_MODULES is
the registry, and the experiment schema takes its engine choices from it.
Engine modules are imported only when asked for, so listing names or checking
an experiment never imports a tool wrapper that is not needed.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect

from ...errors import ToolError
from .base import TrafficEngine

_PACKAGE = __name__.rsplit(".", 1)[0]

#: Engines, each the name of the module (in this package) that defines it; the first is the default.
ENGINE_MODULES = ("native", "ditg", "iperf3", "ping")


def _module_exists(module: str) -> bool:
    """True when the engine module is present in this package."""
    return importlib.util.find_spec(f"{_PACKAGE}.{module}") is not None


def engine_names() -> list[str]:
    """Names of the engines this installation has (native only once its module exists)."""
    return [name for name in ENGINE_MODULES if _module_exists(name)]


def engine_class(name: str) -> type[TrafficEngine]:
    """The TrafficEngine subclass registered as name; ToolError for an unknown or absent engine."""
    if name not in ENGINE_MODULES:
        raise ToolError(f"unknown traffic engine {name!r}; expected one of {sorted(ENGINE_MODULES)}")
    if not _module_exists(name):
        raise ToolError(f"traffic engine {name!r} is not part of this installation")
    module = importlib.import_module(f"{_PACKAGE}.{name}")
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, TrafficEngine) and not inspect.isabstract(obj) and obj.name == name:
            return obj
    raise ToolError(f"module {module.__name__} defines no TrafficEngine named {name!r}")


def make_engine(name: str, **kwargs) -> TrafficEngine:
    """An instance of the engine registered as name."""
    return engine_class(name)(**kwargs)
