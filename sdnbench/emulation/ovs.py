"""Thin helpers over ovs-vsctl for what Mininet does not do for us."""

from __future__ import annotations

import subprocess

from ..errors import CapabilityError


def vsctl_argv(*commands: list[str], timeout: float = 30.0, options: tuple[str, ...] = ()) -> list[str]:
    """The ovs-vsctl argv of several commands in one transaction ('--' separated); options go before them."""
    argv = ["ovs-vsctl", f"--timeout={int(timeout)}", *options]
    for cmd in commands:
        argv += ["--", *cmd]
    return argv


def vsctl(*commands: list[str], timeout: float = 30.0, options: tuple[str, ...] = ()) -> str:
    """Run several ovs-vsctl commands in one transaction ('--' separated); options go before them."""
    argv = vsctl_argv(*commands, timeout=timeout, options=options)
    res = subprocess.run(argv, capture_output=True, text=True, timeout=timeout + 5)
    if res.returncode != 0:
        raise CapabilityError(f"ovs-vsctl failed: {res.stderr.strip()}")
    return res.stdout


def set_controllers(bridges: list[str], target: str, openflow: str, fail_mode: str, run=vsctl) -> None:
    """Point every bridge at one controller target, with the OpenFlow version and fail mode; run: how
    ovs-vsctl runs (vsctl here, a worker's over ssh)."""
    proto = {"1.0": "OpenFlow10", "1.3": "OpenFlow13"}[openflow]
    cmds = []
    for br in bridges:
        cmds += [["set-fail-mode", br, fail_mode], ["set", "bridge", br, f"protocols={proto}"],
                 ["set-controller", br, target]]
    run(*cmds)
    # Reconnect fast after a refused connect instead of OVS's 8 s default backoff.
    run(*[["set", "controller", br, "max_backoff=1000", "inactivity_probe=30000"] for br in bridges])


def connected_bridges(bridges: list[str], run=vsctl) -> set[str]:
    """Which bridges report an established connection to their controller (a bridge without a
    controller, e.g. cut off by fault injection, is not connected)."""
    if not bridges:
        return set()
    # One line per bridge: its name, then its controllers' is_connected flags (none without one).
    out = run(*[c for br in bridges for c in (["get", "bridge", br, "name"],
                                               ["--if-exists", "get", "controller", br, "is_connected"])])
    connected, current = set(), None
    for token in out.split():
        token = token.strip('"')
        if token in bridges:
            current = token
        elif token == "true" and current is not None:
            connected.add(current)
    return connected


def existing_bridges() -> set[str]:
    """Names of all OVS bridges on the machine."""
    return set(vsctl(["list-br"]).split())


def delete_bridge(name: str) -> None:
    """Remove a bridge if it exists."""
    vsctl(["--if-exists", "del-br", name])


def interface_columns(names: list[str], columns: list[str]) -> dict[str, dict]:
    """name -> {column: value} for these interfaces; empty optional columns read as None."""
    import json

    if not names:
        return {}
    out = json.loads(vsctl([f"--columns=name,{','.join(columns)}", "list", "Interface", *names],
                           options=("--format=json",)))
    rows = {}
    for row in out["data"]:
        values = [None if v == ["set", []] else v for v in row]
        rows[values[0]] = dict(zip(columns, values[1:]))
    return rows


def iface_types() -> set[str]:
    """Interface types this ovs-vswitchd offers (afxdp only when built with AF_XDP)."""
    return set(vsctl(["get", "Open_vSwitch", ".", "iface_types"]).strip("[]\n ").replace(" ", "").split(","))


def other_config(key: str) -> str | None:
    """A global other_config value of Open vSwitch, None when unset."""
    out = vsctl(["--if-exists", "get", "Open_vSwitch", ".", f"other_config:{key}"]).strip()
    return out.strip('"') or None


def set_other_config(key: str, value: str | None) -> None:
    """Set (None: remove) a global other_config value of Open vSwitch."""
    if value is None:
        vsctl(["remove", "Open_vSwitch", ".", "other_config", key])
    else:
        vsctl(["set", "Open_vSwitch", ".", f"other_config:{key}={value}"])
