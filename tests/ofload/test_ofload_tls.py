"""sdnbench-ofload over TLS against ovs-testcontroller listening with pssl: (certificates made by openssl)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import run_ofload, start_testcontroller

EXT = """[v3_ca]
basicConstraints=critical,CA:TRUE
keyUsage=critical,keyCertSign,cRLSign
[v3_leaf]
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
"""


def make_ca(d: Path, name: str) -> None:
    """A self-signed CA name.pem/name.key in d."""
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", d / f"{name}.key",
                    "-out", d / f"{name}.pem", "-days", "2", "-subj", f"/CN=sbof {name}", "-extensions", "v3_ca",
                    "-config", d / "openssl.cnf"], check=True, capture_output=True)


def make_leaf(d: Path, name: str, ca: str) -> None:
    """A certificate name.pem/name.key signed by ca."""
    subprocess.run(["openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", d / f"{name}.key",
                    "-out", d / f"{name}.csr", "-subj", f"/CN=sbof-{name}"], check=True, capture_output=True)
    subprocess.run(["openssl", "x509", "-req", "-in", d / f"{name}.csr", "-CA", d / f"{ca}.pem", "-CAkey", d / f"{ca}.key",
                    "-CAcreateserial", "-out", d / f"{name}.pem", "-days", "2", "-extfile", d / "openssl.cnf",
                    "-extensions", "v3_leaf"], check=True, capture_output=True)


@pytest.fixture
def pki(tmp_path) -> Path:
    """CA, controller and switch certificates, plus an unrelated CA."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl missing: apt-get install openssl")
    base = Path("/etc/ssl/openssl.cnf")
    (tmp_path / "openssl.cnf").write_text((base.read_text() if base.exists() else "") + "\n" + EXT)
    make_ca(tmp_path, "ca")
    make_ca(tmp_path, "other")
    make_leaf(tmp_path, "ctl", "ca")
    make_leaf(tmp_path, "sw", "ca")
    return tmp_path


@pytest.fixture
def ssl_controller(tracker, pki) -> int:
    """ovs-testcontroller listening for TLS (pssl:) on a free port."""
    keys = ["-p", str(pki / "ctl.key"), "-c", str(pki / "ctl.pem"), "-C", str(pki / "ca.pem")]
    return start_testcontroller(tracker, pki / "ctl.log", keys, scheme="pssl")


def test_throughput_over_tls(ofload_bin, pki, ssl_controller):
    p = run_ofload(ofload_bin, ssl_controller, "-s", "4", "-M", "100", "-l", "3", "-m", "400", "-t", "-T", "1",
                   "--tls", "--tls-ca", str(pki / "ca.pem"), "--tls-cert", str(pki / "sw.pem"), "--tls-key", str(pki / "sw.key"))
    assert p.returncode == 0, p.stdout + p.stderr
    s = json.loads(p.stdout.splitlines()[-1])["data"]
    assert s["transport"] == "tls" and s["switches_connected"] == 4
    assert s["totals"]["matched"] > 0 and s["totals"]["unmatched"] == 0 and s["totals"]["timeouts"] == 0


def test_controller_signed_by_another_ca_is_refused(ofload_bin, pki, ssl_controller):
    p = run_ofload(ofload_bin, ssl_controller, "-s", "1", "-l", "2", "-m", "200", "--connect-timeout", "5s",
                   "--tls", "--tls-ca", str(pki / "other.pem"), "--tls-cert", str(pki / "sw.pem"), "--tls-key", str(pki / "sw.key"))
    assert p.returncode == 2
    err = json.loads(p.stdout.splitlines()[-1])
    assert err["type"] == "error" and "TLS" in err["data"]["message"], err
