"""A registry of interchangeable kinds (switches, link realisations) by name.

Each kind lives in its own module, imported only when asked for: validating an
experiment lists names without importing Mininet or any kind's dependencies.
"""

from __future__ import annotations

import importlib

from ..errors import ConfigError


class Registry:
    """Names -> 'module:Class' within one package; the class is imported on first use."""

    def __init__(self, what: str, package: str, entries: dict[str, str]):
        self.what, self.package, self.entries = what, package, entries

    def names(self) -> tuple[str, ...]:
        """Every registered name, in registration order."""
        return tuple(self.entries)

    def get(self, name: str) -> type:
        """The class registered as name; ConfigError naming the choices for an unknown one."""
        if name not in self.entries:
            raise ConfigError(f"unknown {self.what} {name!r}; expected one of {', '.join(self.entries)}")
        module, cls = self.entries[name].split(":")
        return getattr(importlib.import_module(f"{self.package}.{module}"), cls)

    def classes(self) -> dict[str, type]:
        """name -> class for every registered kind (imports them all: doctor)."""
        return {name: self.get(name) for name in self.entries}
