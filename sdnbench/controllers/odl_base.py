"""The per-run Karaf base of an OpenDaylight start: its configuration, written before it boots.

Karaf separates its home (bin, lib, system/: the bundles, read only) from its
base (etc/, data/, and the working directory where OpenDaylight keeps its
datastore journal). sdnbench gives every start a fresh base in the run
directory, so no flow, switch or setting of one run survives into the next and
Karaf's own log (data/log/karaf.log) stays with the run.

What this module sets, and why:

- OpenFlow: both switch-connection instances of openflowplugin (the "default"
  one, 6653, and the "legacy" one, 6633) listen on 127.0.0.1, the default on
  the experiment's port, the legacy one on a free port (it cannot be turned
  off: Karaf writes its file back on every fresh boot if it is missing).
- RESTCONF: pax-web's own connector on 127.0.0.1 at the REST port. The
  connector in jetty.xml is removed: pax-web matches connectors by address
  and port, so with jetty.xml on 0.0.0.0:8181 and pax-web on 127.0.0.1 it
  opens a second connector, the bind fails, and every RESTCONF bundle waits
  until the 300 s readiness timeout.
- Configuration is read from etc/, never written back to it
  (`felix.fileinstall.enableConfigSave = false`): a boot once emptied
  etc/org.ops4j.pax.logging.cfg this way, and Karaf's log then went silent.
- The Karaf SSH console (8101), JMX/RMI (1099, 44444) and the Akka cluster
  port (2550) are on 127.0.0.1 already (sshHost is set by install-odl.sh);
  their port numbers are fixed, so one OpenDaylight runs per machine.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

#: Ports the distribution listens on, on 127.0.0.1, whatever the experiment says.
FIXED_PORTS = {8101: "Karaf SSH console", 1099: "JMX RMI registry", 44444: "JMX RMI server",
               2550: "Akka cluster (datastore)"}
INITIAL_CONFIG = Path("etc/opendaylight/datastore/initial/config")
#: openflowplugin's two switch-connection instances, by their file in INITIAL_CONFIG.
CONNECTION_FILES = {"default": "default-openflow-connection-config.xml",
                    "legacy": "legacy-openflow-connection-config.xml"}
_JETTY_CONNECTOR = re.compile(r"\s*<Call name=\"addConnector\">.*?</Call>", re.S)
#: Base subdirectories that only a running Karaf needs (the bundle cache is ~130 MB).
SCRATCH = ("data/cache", "data/tmp", "data/generated-bundles", "data/kar", "data/pax-web-jsp")


def connection_config(instance: str, address: str, port: int) -> str:
    """openflowplugin's switch-connection config of one listener (plain TCP)."""
    return (
        '<switch-connection-config xmlns="urn:opendaylight:params:xml:ns:yang:openflow:switch:connection:config">\n'
        f"  <instance-name>openflow-switch-connection-provider-{instance}-impl</instance-name>\n"
        f"  <port>{port}</port>\n"
        f"  <address>{address}</address>\n"
        "  <transport-protocol>TCP</transport-protocol>\n"
        "  <group-add-mod-enabled>false</group-add-mod-enabled>\n"
        "  <channel-outbound-queue-size>1024</channel-outbound-queue-size>\n"
        "</switch-connection-config>\n")


def set_property(text: str, key: str, value: str) -> str:
    """A Java properties text with key set to value (replaced where it is, else appended)."""
    line = f"{key} = {value}"
    pattern = re.compile(rf"^\s*{re.escape(key)}\s*[=:].*$", re.M)
    if pattern.search(text):
        return pattern.sub(line, text, count=1)
    return text.rstrip("\n") + "\n" + line + "\n"


def without_jetty_connector(jetty_xml: str) -> str:
    """jetty.xml with its connector removed, so that pax-web's own (configured in its .cfg) is the only one."""
    return _JETTY_CONNECTOR.sub("", jetty_xml, count=1)


def make_base(home: Path, base: Path, address: str, openflow_port: int, legacy_port: int,
              rest_port: int) -> None:
    """Create a fresh Karaf base for one start (an earlier one at that path is replaced)."""
    if base.exists():
        shutil.rmtree(base)
    shutil.copytree(home / "etc", base / "etc")
    for sub in ("data", "deploy", INITIAL_CONFIG):
        (base / sub).mkdir(parents=True, exist_ok=True)
    # Written before the features install, so Karaf keeps them instead of its defaults.
    for instance, name in CONNECTION_FILES.items():
        port = openflow_port if instance == "default" else legacy_port
        (base / INITIAL_CONFIG / name).write_text(connection_config(instance, address, port))
    web = base / "etc" / "org.ops4j.pax.web.cfg"
    text = set_property(web.read_text(), "org.osgi.service.http.port", str(rest_port))
    web.write_text(set_property(text, "org.ops4j.pax.web.listening.addresses", address))
    jetty = base / "etc" / "jetty.xml"
    jetty.write_text(without_jetty_connector(jetty.read_text()))
    framework = base / "etc" / "config.properties"
    framework.write_text(set_property(framework.read_text(), "felix.fileinstall.enableConfigSave", "false"))


def tidy_base(base: Path) -> None:
    """Remove what only a running Karaf needs; the log, configuration and journal stay."""
    for sub in SCRATCH:
        shutil.rmtree(base / sub, ignore_errors=True)
