"""sdnbench-tgen output on loopback (no root): every line matches the committed JSON Schema."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .nspair import free_port, summaries, tgen_binary

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "tgen.schema.json"


def _tool() -> str:
    path = tgen_binary()
    if not path:
        pytest.skip("sdnbench-tgen is not built: cargo build --release -p sdnbench-tgen")
    return str(path)


def _validator():
    jsonschema = pytest.importorskip("jsonschema")
    return jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text()))


def _pair(recv: list[str], send: list[str]) -> tuple[subprocess.CompletedProcess, str]:
    """Runs a receiver and a sender on 127.0.0.1; returns the sender's result and the receiver's stdout."""
    tool = _tool()
    rx = subprocess.Popen([tool, "recv", *recv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert "listening" in rx.stderr.readline()
        tx = subprocess.run([tool, "send", *send], capture_output=True, text=True, timeout=60)
        out, _ = rx.communicate(timeout=30)
    finally:
        if rx.poll() is None:
            rx.kill()
            rx.wait()
    return tx, out


def _check(validator, text: str) -> list[dict]:
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    for line in lines:
        errors = sorted(validator.iter_errors(line), key=str)
        assert not errors, f"{line}\n{errors[0]}"
    return lines


@pytest.mark.parametrize("extra", [[], ["--pattern", "poisson", "--payload-dist", "uniform:40-200"],
                                   ["--on", "20ms", "--off", "20ms", "--flows", "2"],
                                   ["--video-bitrate", "2Mbps", "--gso"]])
def test_udp_lines_match_schema(extra):
    v, port = _validator(), free_port()
    flows = "2" if "--flows" in extra else "1"
    tx, out = _pair(["--bind", f"127.0.0.1:{port}", "--interval", "50ms", "--expect-flows", flows],
                    ["--to", f"127.0.0.1:{port}", "--rate", "2kpps", "--duration", "300ms", *extra])
    assert tx.returncode == 0, tx.stdout + tx.stderr
    _check(v, tx.stdout)
    lines = _check(v, out)
    assert any(x["type"] == "interval" for x in lines)
    rx = summaries(out, "receiver")
    assert len(rx) == int(flows)
    if "--video-bitrate" in extra:
        assert rx[0]["video"]["frames_complete"] == rx[0]["video"]["frames_expected"] > 0
    assert sum(r["rx_pkts"] for r in rx) == sum(s["tx_pkts"] for s in summaries(tx.stdout, "sender"))


def test_echo_and_tcp_lines_match_schema():
    v, port = _validator(), free_port()
    tx, out = _pair(["--bind", f"127.0.0.1:{port}", "--echo"],
                    ["--to", f"127.0.0.1:{port}", "--echo", "--count", "100", "--rate", "1kpps", "--linger", "200ms"])
    _check(v, tx.stdout + out)
    assert summaries(tx.stdout, "sender")[0]["rx_pkts"] == 100
    port = free_port()
    tx, out = _pair(["--proto", "tcp", "--bind", f"127.0.0.1:{port}"],
                    ["--proto", "tcp", "--to", f"127.0.0.1:{port}", "--size", "1MB"])
    _check(v, tx.stdout + out)
    assert summaries(out, "receiver")[0]["bytes"] == 1_000_000


@pytest.mark.parametrize("argv", [["send", "--to", "127.0.0.1:9", "--rate", "100", "--count", "1"],
                                  ["send", "--to", "127.0.0.1:9", "--rate", "1kpps", "--duration", "10"],
                                  ["send", "--to", "127.0.0.1:9", "--count", "1", "--payload", "16B"]])
def test_bad_units_exit_2_with_error_line(argv):
    r = subprocess.run([_tool(), *argv], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2
    line = json.loads(r.stdout.splitlines()[0])
    assert line["type"] == "error" and line["data"]["message"]
    _check(_validator(), r.stdout)


def test_help_names_units():
    r = subprocess.run([_tool(), "send", "--help"], capture_output=True, text=True, timeout=10)
    assert r.returncode == 0
    for unit in ("kpps", "Mbps", "1GB", "500ms", "bytes"):
        assert unit in r.stdout
