"""The OpenDaylight adapter without OpenDaylight: refusals, the per-run Karaf base, environment,
availability, and the southbound benchmark reporting "not applicable"."""

from __future__ import annotations

import socket

import pytest

from sdnbench.controllers import ControllerSpec, make_adapter
from sdnbench.controllers.odl import OdlAdapter
from sdnbench.controllers.odl_base import (CONNECTION_FILES, INITIAL_CONFIG, make_base, set_property, tidy_base,
                                           without_jetty_connector)
from sdnbench.controllers.process import free_port
from sdnbench.errors import ConfigError, ControllerError
from sdnbench.runner.plan import Trial
from sdnbench.workloads.base import TrialContext
from sdnbench.workloads.types.sbi import WORKLOAD as SBI

JETTY = """<Configure id="Server" class="org.eclipse.jetty.server.Server">
    <New id="http-default" class="org.eclipse.jetty.server.HttpConfiguration"/>
    <Call name="addConnector">
        <Arg><New class="org.eclipse.jetty.server.ServerConnector">
            <Set name="port"><Property name="jetty.port" default="8181"/></Set>
        </New></Arg>
    </Call>
    <Call name="addBean"><Arg>realm</Arg></Call>
</Configure>
"""


@pytest.fixture
def fake_home(tmp_path, monkeypatch):
    """A built-looking distribution under SDNBENCH_CONTROLLERS (no Java behind it)."""
    home = tmp_path / "controllers" / "odl" / "karaf"
    (home / "etc").mkdir(parents=True)
    (home / "bin").mkdir()
    (home / "bin" / "karaf").write_text("#!/bin/sh\n")
    (home / "etc" / "jetty.xml").write_text(JETTY)
    (home / "etc" / "config.properties").write_text("felix.fileinstall.enableConfigSave = true\n"
                                                    "felix.fileinstall.dir    = ${karaf.etc}\n")
    (home / "etc" / "org.ops4j.pax.web.cfg").write_text("org.ops4j.pax.web.config.file = etc/jetty.xml\n"
                                                         "org.osgi.service.http.port = 8181\n")
    jdk = tmp_path / "jdk"
    (jdk / "bin").mkdir(parents=True)
    (jdk / "bin" / "java").write_text("")
    (jdk / "release").write_text('JAVA_VERSION="17.0.15"\n')
    (home / "sdnbench-odl.properties").write_text(
        f"stamp=x\njava_home={jdk}\nopenflowplugin=0.17.3\nnetconf=6.0.8\nodlparent=13.1.3\n")
    monkeypatch.setenv("SDNBENCH_CONTROLLERS", str(tmp_path / "controllers"))
    return home


def test_openflow_10_is_refused_with_the_reason():
    with pytest.raises(ConfigError, match=r"odl speaks OpenFlow 1.3 only, not '1.0' \(.*1.0 support is not tested"):
        make_adapter(ControllerSpec(kind="odl", label="odl", openflow="1.0"))


def test_missing_build_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv("SDNBENCH_CONTROLLERS", str(tmp_path))
    avail = OdlAdapter.availability()
    assert not avail.ok and "not built" in avail.detail and "install-controllers.sh odl" in avail.fix
    adapter = make_adapter(ControllerSpec(kind="odl", label="odl", port=free_port()))
    with pytest.raises(ControllerError, match="not built"):
        adapter.start(tmp_path / "run")
    assert adapter.pids() == []


def test_availability_and_version_come_from_the_build(fake_home):
    avail = OdlAdapter.availability()
    assert avail.ok, avail.detail
    version = make_adapter(ControllerSpec(kind="odl", label="odl")).version()
    assert version == "OpenDaylight Potassium (openflowplugin 0.17.3, netconf 6.0.8, odlparent 13.1.3) on Java 17.0.15"


def test_the_base_puts_every_listener_on_loopback(fake_home, tmp_path):
    base = tmp_path / "run" / "odl-karaf"
    make_base(fake_home, base, "127.0.0.1", 16653, 16633, 18181)
    default = (base / INITIAL_CONFIG / CONNECTION_FILES["default"]).read_text()
    legacy = (base / INITIAL_CONFIG / CONNECTION_FILES["legacy"]).read_text()
    assert "<port>16653</port>" in default and "<address>127.0.0.1</address>" in default
    assert "<port>16633</port>" in legacy and "legacy-impl" in legacy
    web = (base / "etc" / "org.ops4j.pax.web.cfg").read_text()
    assert "org.osgi.service.http.port = 18181" in web and "org.ops4j.pax.web.listening.addresses = 127.0.0.1" in web
    jetty = (base / "etc" / "jetty.xml").read_text()
    assert "addConnector" not in jetty and "addBean" in jetty
    framework = (base / "etc" / "config.properties").read_text()
    assert "felix.fileinstall.enableConfigSave = false" in framework and "fileinstall.dir" in framework
    assert (fake_home / "etc" / "jetty.xml").read_text() == JETTY, "the distribution itself is never changed"
    for scratch in ("data/cache/x", "data/tmp/y"):
        (base / scratch).parent.mkdir(parents=True, exist_ok=True)
        (base / scratch).write_text("")
    (base / "data" / "log").mkdir()
    (base / "data" / "log" / "karaf.log").write_text("System ready")
    tidy_base(base)
    assert not (base / "data" / "cache").exists() and (base / "data" / "log" / "karaf.log").exists()


def test_set_property_replaces_or_appends():
    assert set_property("a = 1\nb=2\n", "b", "3") == "a = 1\nb = 3\n"
    assert set_property("a = 1", "c", "x") == "a = 1\nc = x\n"
    assert without_jetty_connector("<A><Call name=\"addConnector\">x</Call></A>") == "<A></A>"


def test_environment_bounds_the_heap_and_execs_java(fake_home, tmp_path, monkeypatch):
    monkeypatch.setenv("KARAF_HOME", "/elsewhere")
    monkeypatch.setenv("JAVA_OPTS", "-Xmx64g")
    adapter = make_adapter(ControllerSpec(kind="odl", label="odl", options={"heap": "2g"}))
    adapter.base = tmp_path / "base"
    env = adapter.environment(tmp_path)
    assert env["KARAF_BASE"] == str(tmp_path / "base") and env["KARAF_EXEC"] == "exec"
    assert "-Xmx2g" in env["EXTRA_JAVA_OPTS"] and "-XX:-HeapDumpOnOutOfMemoryError" in env["EXTRA_JAVA_OPTS"]
    assert "KARAF_HOME" not in env and "JAVA_OPTS" not in env
    assert env["JAVA_HOME"].endswith("jdk")
    assert adapter.command(tmp_path)[-1] == "server"


def test_a_busy_restconf_port_is_refused_before_booting(fake_home, tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        busy = s.getsockname()[1]
        adapter = make_adapter(ControllerSpec(kind="odl", label="odl", port=free_port(), rest_port=busy))
        with pytest.raises(ControllerError, match=f"{busy} \\(RESTCONF\\).*Only one runs per machine"):
            adapter.prepare(tmp_path)


def test_southbound_load_is_reported_not_applicable_instead_of_a_zero_rate(tmp_path):
    spec = ControllerSpec(kind="odl", label="odl")
    workload = {"name": "sbi", "type": "sbi", "mode": "throughput", "switches": 4, "macs_per_switch": 10,
                "loops": 2, "ms_per_loop": 100, "warmup_loops": 0, "window": None, "topology_aware": False,
                "paths": False, "options": []}
    trial = Trial(0, spec, None, "-", None, workload, {}, 0)
    adapter = make_adapter(spec)
    results, env = SBI.run(trial, TrialContext(None, adapter, tmp_path))
    [result] = results
    assert result.metrics == {} and result.errors[0].startswith("not applicable: OpenDaylight runs no reactive")
    assert SBI.headline(results) == result.errors[0]
    assert env["southbound_profile"] == result.errors[0]


def test_other_controllers_keep_the_default_hook():
    adapter = make_adapter(ControllerSpec(kind="none", label="none"))
    assert adapter.network_ready(None) == {}
    assert adapter.southbound_profile().reactive
