"""Fixtures for the sdnbench-apiload tests: the built binary and a runner that parses its output."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from sdnbench.paths import REPO_ROOT, build_hint, native_tool

SCHEMA_PATH = REPO_ROOT / "schemas" / "apiload.schema.json"


@dataclass
class Run:
    """One finished run of the binary."""

    code: int
    records: list[dict]
    stderr: str

    @property
    def intervals(self) -> list[dict]:
        """The `data` of every interval line."""
        return [r["data"] for r in self.records if r["type"] == "interval"]

    @property
    def summary(self) -> dict:
        """The `data` of the summary line."""
        found = [r["data"] for r in self.records if r["type"] == "summary"]
        assert len(found) == 1, f"expected one summary, got {len(found)}; stderr: {self.stderr}"
        return found[0]


@pytest.fixture(scope="session")
def apiload_bin() -> Path:
    """Path of the built binary; skips with the build command when it is missing."""
    path = native_tool("sdnbench-apiload")
    if path is None:
        pytest.skip(f"sdnbench-apiload is not built: {build_hint('sdnbench-apiload')}")
    return path


@pytest.fixture(scope="session")
def schema_validator():
    """A validator for every output line, or None when jsonschema is not installed."""
    try:
        import jsonschema
    except ImportError:
        return None
    return jsonschema.Draft202012Validator(json.loads(SCHEMA_PATH.read_text()))


@pytest.fixture
def run_apiload(apiload_bin, schema_validator):
    """Runs the binary with the given flags and returns a validated Run."""

    def run(*args: str, timeout_s: float = 60) -> Run:
        proc = subprocess.run([str(apiload_bin), *args], capture_output=True, text=True, timeout=timeout_s)
        records = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
        if schema_validator is not None:
            for rec in records:
                schema_validator.validate(rec)
        return Run(proc.returncode, records, proc.stderr)

    return run
