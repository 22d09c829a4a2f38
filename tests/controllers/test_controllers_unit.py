"""Controller adapters without root: registry, generated config, argv, availability, lifecycle."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sdnbench.controllers import ADAPTERS, ControllerSpec, make_adapter
from sdnbench.controllers.faucet import FaucetAdapter, faucet_config, parse_dpid
from sdnbench.controllers.process import ProcessAdapter, free_port, port_listening
from sdnbench.errors import ConfigError, ControllerError
from sdnbench.paths import venv_python
from sdnbench.procs import ProcessTracker

APPS_DIR = Path(__file__).resolve().parents[2] / "sdnbench" / "controllers" / "apps"


def spec(kind: str, openflow: str = "1.3", **kw) -> ControllerSpec:
    """A spec with label = kind."""
    return ControllerSpec(kind=kind, label=kw.pop("label", kind), openflow=openflow, **kw)


def need(kind: str) -> None:
    """Skip unless the controller is installed here."""
    avail = ADAPTERS[kind].availability()
    if not avail.ok:
        pytest.skip(f"{kind}: {avail.detail} (fix: {avail.fix})")


# -- registry -----------------------------------------------------------------

def test_registry_has_every_kind():
    assert set(ADAPTERS) == {"osken", "ryu", "faucet", "testcontroller", "pox", "odl", "p4rt", "remote", "none"}
    for kind, cls in ADAPTERS.items():
        assert cls.kind == kind


def test_unknown_kind_is_a_config_error():
    with pytest.raises(ConfigError, match="unknown controller 'floodlight'.*osken"):
        make_adapter(spec("floodlight"))


@pytest.mark.parametrize("kind,openflow", [("pox", "1.3"), ("faucet", "1.0"), ("osken", "1.5")])
def test_unsupported_openflow_is_a_config_error(kind, openflow):
    with pytest.raises(ConfigError, match=f"not '{openflow}'"):
        make_adapter(spec(kind, openflow))


def test_unknown_app_is_refused_before_anything_starts(tmp_path):
    adapter = make_adapter(spec("osken", app="simple_switch"))
    with pytest.raises(ControllerError, match="l2_learning, l2_flow_every_packet_in, l2_packet_out"):
        adapter.start(tmp_path)
    assert adapter.pids() == [] and not list(tmp_path.iterdir())


# -- faucet.yaml --------------------------------------------------------------

def test_faucet_config_one_vlan_all_ports():
    config = faucet_config({"0000000000000abc": [1, 2], 2: 3}, vid=42)
    assert config["vlans"] == {"sdnbench": {"vid": 42}}
    assert config["dps"]["swabc"] == {"dp_id": 0xABC, "hardware": "Open vSwitch",
                                      "interfaces": {1: {"native_vlan": "sdnbench"},
                                                     2: {"native_vlan": "sdnbench"}}}
    assert sorted(config["dps"]["sw2"]["interfaces"]) == [1, 2, 3]


@pytest.mark.parametrize("datapaths,vid,message", [
    ({}, 100, "no datapaths"),
    ({1: [1], "1": [2]}, 100, "given twice"),
    ({1: [0, 1]}, 100, "distinct numbers >= 1"),
    ({1: [1, 1]}, 100, "distinct numbers >= 1"),
    ({0: [1]}, 100, "out of range"),
    ({1: [1]}, 5000, "1..4094"),
])
def test_faucet_config_rejects(datapaths, vid, message):
    with pytest.raises(ValueError, match=message):
        faucet_config(datapaths, vid)


def test_dpid_strings_are_hex():
    assert parse_dpid("0000000000000010") == 16 == parse_dpid("0x10") == parse_dpid(16)


def test_faucet_needs_datapaths(tmp_path):
    adapter = FaucetAdapter(spec("faucet"))
    with pytest.raises(ControllerError, match=r"options\['datapaths'\]"):
        adapter.prepare(tmp_path)


def test_faucet_files_and_environment(tmp_path):
    adapter = FaucetAdapter(spec("faucet", label="fct", rest_port=9302, options={"datapaths": {1: 2}}))
    adapter.prepare(tmp_path)
    written = yaml.safe_load((tmp_path / "fct-faucet.yaml").read_text())
    assert written == faucet_config({1: 2})
    env = adapter.environment(tmp_path)
    assert env["PATH"].split(os.pathsep)[0] == str(venv_python("faucet").parent)
    assert env["FAUCET_CONFIG"] == str(tmp_path / "fct-faucet.yaml")
    assert env["FAUCET_LOG"] == str(tmp_path / "fct-faucet-app.log")
    assert (env["FAUCET_PROMETHEUS_ADDR"], env["FAUCET_PROMETHEUS_PORT"]) == ("127.0.0.1", "9302")
    assert adapter.endpoints() == {"openflow": "tcp:127.0.0.1:6653",
                                   "prometheus": "http://127.0.0.1:9302/metrics"}


def test_generated_faucet_yaml_passes_faucets_own_check(tmp_path):
    need("faucet")
    check = venv_python("faucet").parent / "check_faucet_config"
    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(faucet_config({"0000000000000001": 4, 2: [1, 5]})))
    bad = tmp_path / "bad.yaml"
    bad.write_text(good.read_text().replace("native_vlan: sdnbench", "native_vlan: nosuchvlan"))
    assert subprocess.run([str(check), str(good)], capture_output=True).returncode == 0
    assert subprocess.run([str(check), str(bad)], capture_output=True).returncode != 0


# -- argv ---------------------------------------------------------------------

def test_osken_argv(tmp_path):
    argv = make_adapter(spec("osken", "1.0", port=7001, app="l2_packet_out",
                             options={"idle_timeout": 5})).command(tmp_path)
    assert argv[0] == str(venv_python("osken")) and argv[1].endswith("launchers/osken_launcher.py")
    assert argv[2:] == ["--host", "127.0.0.1", "--port", "7001", "--openflow", "1.0",
                        "--flows", "never", "--idle-timeout", "5"]


def test_osken_shortest_path_argv_loads_link_discovery(tmp_path):
    argv = make_adapter(spec("osken", "1.3", port=7001, app="shortest_path")).command(tmp_path)
    assert argv[8:] == ["--app", "l2_shortest_path", "--discover-links", "--idle-timeout", "0"]


@pytest.mark.parametrize("openflow,app", [("1.0", "ryu.app.simple_switch"), ("1.3", "ryu.app.simple_switch_13")])
def test_ryu_argv_default_app_per_version(tmp_path, openflow, app):
    argv = make_adapter(spec("ryu", openflow, port=7002)).command(tmp_path)
    assert argv[1].endswith("launchers/ryu_launcher.py")
    assert argv[2:] == ["--ofp-listen-host", "127.0.0.1", "--ofp-tcp-listen-port", "7002", app]


def test_ryu_rest_binds_loopback(tmp_path):
    adapter = make_adapter(spec("ryu", port=7003, rest_port=8081))
    argv = adapter.command(tmp_path)
    assert argv[-4:] == ["--wsapi-port", "8081", "ryu.app.simple_switch_13", "ryu.app.ofctl_rest"]
    assert argv[argv.index("--wsapi-host") + 1] == "127.0.0.1"
    assert adapter.endpoints()["rest"] == "http://127.0.0.1:8081"


@pytest.mark.parametrize("openflow,app,flags", [
    ("1.0", None, ["-O", "OpenFlow10"]),
    ("1.3", "noflow", ["-O", "OpenFlow13", "--noflow"]),
])
def test_testcontroller_argv(tmp_path, openflow, app, flags):
    argv = make_adapter(spec("testcontroller", openflow, port=7004, app=app)).command(tmp_path)
    assert argv[1:] == flags + ["ptcp:7004:127.0.0.1"]


def test_pox_argv_and_checkout_from_options(tmp_path, monkeypatch):
    monkeypatch.delenv("SDNBENCH_POX_DIR", raising=False)
    (tmp_path / "pox.py").write_text("")
    adapter = make_adapter(spec("pox", "1.0", port=7005, options={"pox_dir": str(tmp_path)}))
    assert adapter.usable().ok
    assert adapter.workdir() == tmp_path
    assert adapter.command(tmp_path)[1:] == [str(tmp_path / "pox.py"), "openflow.of_01", "--port=7005",
                                              "--address=127.0.0.1", "forwarding.l2_learning"]


# -- availability -------------------------------------------------------------

@pytest.mark.parametrize("kind", ["osken", "ryu", "faucet"])
def test_missing_venv_names_the_install_command(kind, tmp_path, monkeypatch):
    monkeypatch.setenv("SDNBENCH_VENVS", str(tmp_path))
    avail = ADAPTERS[kind].availability()
    assert not avail.ok and str(tmp_path / kind) in avail.detail
    assert avail.fix.startswith(f"scripts/install-controllers.sh {kind}")


def test_broken_venv_says_what_does_not_import(tmp_path, monkeypatch):
    monkeypatch.setenv("SDNBENCH_VENVS", str(tmp_path))
    subprocess.run(["python3", "-m", "venv", "--without-pip", str(tmp_path / "osken")], check=True)
    avail = ADAPTERS["osken"].availability()
    assert not avail.ok and "does not import" in avail.detail and "os_ken" in avail.detail


def test_pox_without_checkout(tmp_path, monkeypatch):
    monkeypatch.delenv("SDNBENCH_POX_DIR", raising=False)
    avail = ADAPTERS["pox"].availability()
    assert not avail.ok and "SDNBENCH_POX_DIR" in avail.detail and "SDNBENCH_POX_DIR=" in avail.fix
    monkeypatch.setenv("SDNBENCH_POX_DIR", str(tmp_path))
    assert "not a POX checkout" in ADAPTERS["pox"].availability().detail


def test_testcontroller_missing_binary(monkeypatch):
    monkeypatch.setenv("PATH", "")
    avail = ADAPTERS["testcontroller"].availability()
    assert not avail.ok and avail.fix == "apt-get install -y openvswitch-testcontroller"


# -- the reference app's learning logic --------------------------------------

def load_l2_table():
    """apps/l2_table.py is loaded by path, as os-ken loads it."""
    loader = importlib.util.spec_from_file_location("l2_table", APPS_DIR / "l2_table.py")
    module = importlib.util.module_from_spec(loader)
    sys.modules["l2_table"] = module  # dataclasses look their module up
    loader.loader.exec_module(module)
    return module


def test_l2_learning_decisions():
    l2 = load_l2_table()
    table = l2.MacTable()
    a, b, bcast = "02:00:00:00:00:0a", "02:00:00:00:00:0b", "ff:ff:ff:ff:ff:ff"
    assert l2.decide(table, 1, 1, a, bcast) == l2.Decision(out_port=None)             # ARP request floods
    assert l2.decide(table, 1, 2, b, a) == l2.Decision(out_port=1, install=True)      # reply: a learnt
    assert l2.decide(table, 1, 1, a, b, "never") == l2.Decision(out_port=2)           # packet-out only
    assert l2.decide(table, 2, 1, a, b) == l2.Decision(out_port=None)                 # per datapath
    assert l2.decide(table, 3, 1, a, b, "always") == l2.Decision(out_port=None, install=True)  # flood flow
    assert l2.decide(table, 1, 2, a, b) == l2.Decision(out_port=None, drop=True)      # a moved to 2, b on 2
    assert table.port_of(1, a) == 2
    assert l2.decide(table, 1, 3, "01:00:5e:00:00:01", a).out_port == 2              # multicast src not learnt
    with pytest.raises(ValueError, match="flow policy"):
        l2.decide(table, 1, 1, a, b, "sometimes")
    assert table.size(1) == 2
    table.forget(1)
    assert table.port_of(1, a) is None


# -- real processes, no network ----------------------------------------------

@pytest.mark.parametrize("kind", ["osken", "ryu", "faucet", "testcontroller", "pox"])
def test_starts_listens_stops(kind, tmp_path):
    need(kind)
    port = free_port()
    tracker = ProcessTracker()
    openflow = "1.0" if kind == "pox" else "1.3"
    adapter = make_adapter(spec(kind, openflow, port=port, cpus=1, options={"datapaths": {1: 2}}), tracker)
    try:
        adapter.start(tmp_path)
        assert adapter.listening() and port_listening("127.0.0.1", port)
        [pid] = adapter.pids()
        assert os.sched_getaffinity(pid) == {sorted(os.sched_getaffinity(0))[0]}
        assert kind.replace("testcontroller", "ovs-testcontroller") in adapter.version().replace("os-ken", "osken")
    finally:
        adapter.stop()
        tracker.stop_all()
    assert not os.path.exists(f"/proc/{pid}") and not adapter.listening()
    assert (tmp_path / f"{kind}.log").stat().st_size > 0
    adapter.stop()


def test_port_in_use_is_refused(tmp_path):
    need("testcontroller")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        adapter = make_adapter(spec("testcontroller", port=s.getsockname()[1]))
        with pytest.raises(ControllerError, match="already in use"):
            adapter.start(tmp_path)
    assert adapter.pids() == []


def test_early_exit_reports_the_log_tail(tmp_path):
    need("testcontroller")
    adapter = make_adapter(spec("testcontroller", host="256.1.1.1", port=free_port()))
    with pytest.raises(ControllerError, match=r"(?s)exited with code 1 .*no active or passive"):
        adapter.start(tmp_path)
    assert adapter.pids() == []


class Silent(ProcessAdapter):
    """A process that never listens."""

    kind = "silent"

    @classmethod
    def availability(cls):
        return ADAPTERS["none"].availability()

    def command(self, rundir):
        return ["sleep", "60"]

    def query_version(self):
        return "silent"


def test_timeout_stops_the_process(tmp_path):
    tracker = ProcessTracker()
    spawned = []
    spawn = tracker.spawn
    tracker.spawn = lambda *a, **kw: spawned.append(spawn(*a, **kw)) or spawned[-1]
    adapter = Silent(spec("silent", port=free_port()), tracker)
    with pytest.raises(ControllerError, match="not listening .* after 0.3 s"):
        adapter.start(tmp_path, timeout_s=0.3)
    [proc] = spawned
    assert not proc.alive() and not os.path.exists(f"/proc/{proc.pid}")
    assert adapter.pids() == [] and tracker.processes == []


def test_remote_waits_for_the_port_and_records_rest(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        adapter = make_adapter(spec("remote", port=port, rest_url="http://10.1.2.3:8181/onos/v1",
                                    options={"version": "onos 2.7"}))
        adapter.start(tmp_path, timeout_s=2)
        assert adapter.listening() and adapter.version() == "onos 2.7"
        assert adapter.endpoints() == {"openflow": f"tcp:127.0.0.1:{port}", "rest": "http://10.1.2.3:8181/onos/v1"}
    adapter.stop()
    with pytest.raises(ControllerError, match="nothing accepts connections"):
        make_adapter(spec("remote", port=port)).start(tmp_path, timeout_s=0.3)


def test_none_is_standalone(tmp_path):
    adapter = make_adapter(spec("none"))
    adapter.start(tmp_path)
    assert adapter.standalone and adapter.endpoints() == {} and adapter.pids() == []
    assert not ADAPTERS["osken"].standalone


def http_get(url: str, expect: str, timeout_s: float = 15.0) -> str:
    """GET url until the body contains expect (servers and their metrics come up late)."""
    import time
    import urllib.request
    deadline = time.monotonic() + timeout_s
    body = ""
    while expect not in body and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                body = resp.read().decode()
        except OSError as exc:
            body = str(exc)
        time.sleep(0.2)
    return body


@pytest.mark.parametrize("kind,path,expected", [
    ("ryu", "/stats/switches", "[]"),
    ("faucet", "/metrics", 'of_packet_ins_total{dp_id="0xabc",dp_name="swabc"}'),
])
def test_northbound_endpoint_answers_on_loopback(kind, path, expected, tmp_path):
    need(kind)
    adapter = make_adapter(spec(kind, port=free_port(), rest_port=free_port(),
                                options={"datapaths": {"abc": [1]}}))
    try:
        adapter.start(tmp_path)
        base = adapter.endpoints()["rest" if kind == "ryu" else "prometheus"]
        assert base.startswith("http://127.0.0.1:")
        body = http_get(base.removesuffix("/metrics") + path, expected)
        assert expected in body, body[-2000:]
    finally:
        adapter.stop()


def test_start_without_venv_names_the_fix(tmp_path, monkeypatch):
    monkeypatch.setenv("SDNBENCH_VENVS", str(tmp_path / "venvs"))
    with pytest.raises(ControllerError, match="install-controllers.sh ryu"):
        make_adapter(spec("ryu", port=free_port())).start(tmp_path)
