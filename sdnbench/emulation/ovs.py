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


def controller_commands(bridges: list[str], target: str, openflow: str, fail_mode: str) -> list[list[str]]:
    """The ovs-vsctl commands that point every bridge at one controller target, with the OpenFlow
    version and fail mode, and a 1 s reconnect backoff (OVS's default backs off up to 8 s after a
    refused connect), as one transaction: ovs-vswitchd reconfigures once, not once per bridge."""
    proto = {"1.0": "OpenFlow10", "1.3": "OpenFlow13"}[openflow]
    cmds = []
    for i, br in enumerate(bridges):
        # The bridge's previous Controller row, no longer referenced, is garbage-collected by OVSDB.
        cmds += [[f"--id=@c{i}", "create", "Controller", f'target="{target}"', "max_backoff=1000",
                  "inactivity_probe=30000"],
                 ["set", "bridge", br, f"controller=@c{i}", f"fail_mode={fail_mode}", f"protocols={proto}"]]
    return cmds


def set_controllers(bridges: list[str], target: str, openflow: str, fail_mode: str, run=None) -> None:
    """Point every bridge at one controller target, with the OpenFlow version and fail mode; run: how
    ovs-vsctl runs (default vsctl here; a worker's over ssh)."""
    if bridges:
        (run or vsctl)(*controller_commands(bridges, target, openflow, fail_mode))


#: One read of the controller status of every bridge: two tables, whatever the number of bridges.
STATUS_COMMANDS = (["--columns=name,controller", "list", "Bridge"],
                   ["--columns=_uuid,is_connected", "list", "Controller"])


def parse_controller_status(out: str) -> dict[str, bool]:
    """bridge -> connected to one of its controllers, from ovs-vsctl --format=json of STATUS_COMMANDS
    (one JSON table per line: bridges, then controllers)."""
    import json

    bridges, controllers = (json.loads(line) for line in out.splitlines() if line.strip())
    up = {uuid: flag is True for (_, uuid), flag in controllers["data"]}
    status = {}
    for name, ref in bridges["data"]:
        # A set column holds ["uuid", u] for one row and ["set", [[uuid, u], ...]] for none or several.
        uuids = [ref[1]] if ref[0] == "uuid" else [u for _, u in ref[1]]
        status[name] = any(up.get(u, False) for u in uuids)
    return status


def connected_bridges(bridges: list[str], run=None) -> set[str]:
    """Which bridges report an established connection to their controller (a bridge without a
    controller, e.g. cut off by fault injection, is not connected)."""
    if not bridges:
        return set()
    status = parse_controller_status((run or vsctl)(*STATUS_COMMANDS, options=("--format=json",)))
    return {br for br in bridges if status.get(br)}


def existing_bridges() -> set[str]:
    """Names of all OVS bridges on the machine."""
    return set(vsctl(["list-br"]).split())


def delete_bridge(name: str) -> None:
    """Remove a bridge if it exists."""
    delete_bridges([name])


def delete_bridges(names: list[str]) -> None:
    """Remove these bridges (those that exist) in one transaction."""
    if names:
        # ovs-vswitchd takes about 60 ms per userspace bridge to delete (over 100 s for 1,000 on a busy machine).
        vsctl(*[["--if-exists", "del-br", name] for name in names], timeout=max(30.0, len(names) / 2))


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
