"""Attack workload without root: confinement, command lines, output parsing, frames, scheduling."""

from __future__ import annotations

import ipaddress
import random
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdnbench.errors import ConfigError
from sdnbench.topology import build_topology
from sdnbench.workloads import attack_sender
from sdnbench.workloads.attack import (AttackSpec, check_spec, check_spoof_range, check_target, hping3_argv,
                                       parse_hping3_stats, parse_sender_output, plan_attacks, sender_argv,
                                       start_attacks)

DATA = Path(__file__).parent / "data"


@pytest.fixture
def graph():
    """Three hosts h1..h3 (10.0.0.1..3) on one switch."""
    return build_topology({"kind": "single", "hosts": 3})


# -- confinement -------------------------------------------------------------

@pytest.mark.parametrize("ip", ["8.8.8.8", "127.0.0.1", "10.0.0.99", "10.0.0.0", "192.168.1.1", "::1", "h1", ""])
def test_check_target_refuses_anything_but_an_emulated_host(graph, ip):
    with pytest.raises(ConfigError):
        check_target(ip, graph)


def test_check_target_accepts_emulated_host(graph):
    assert check_target("10.0.0.2", graph).name == "h2"


@pytest.mark.parametrize("cidr", ["0.0.0.0/0", "8.8.8.0/24", "127.0.0.0/8", "11.0.0.0/8", "10.0.0.0/7",
                                  "172.16.0.0/12", "10.9.0.0/16", "fc00::/7", "nonsense"])
def test_spoof_range_outside_emulated_network_refused(graph, cidr):
    with pytest.raises(ConfigError):
        check_spoof_range(cidr, graph)


@pytest.mark.parametrize("cidr", ["10.0.0.0/8", "10.0.0.0/24", "10.0.0.2/32"])
def test_spoof_range_inside_accepted(graph, cidr):
    assert check_spoof_range(cidr, graph).subnet_of(ipaddress.ip_network("10.0.0.0/8"))


@pytest.mark.parametrize("spec, match", [
    (AttackSpec("udp", ("h1",), "8.8.8.8", 1.0), "not a host"),
    (AttackSpec("udp", ("h1",), "h7", 1.0), "not an IP|not a host"),
    (AttackSpec("udp", ("h9",), "h2", 1.0), "sources"),
    (AttackSpec("udp", ("h1",), "h1", 1.0), "also one of its sources"),
    (AttackSpec("udp", ("h3",), "last", 1.0), "also one of its sources"),
    (AttackSpec("udp", ("last",), "h3", 1.0), "also one of its sources"),
    (AttackSpec("udp", ("h1", "first"), "h3", 1.0), "twice"),
    (AttackSpec("syn", ("h1",), "h2", 1.0, spoof=True, spoof_cidr="0.0.0.0/0"), "not inside"),
    (AttackSpec("newflows", ("h1",), "h2", 1.0, spoof_cidr="192.168.0.0/16"), "not inside"),
    (AttackSpec("smurf", ("h1",), "h2", 1.0), "kind"),
    (AttackSpec("udp", (), "h2", 1.0), "at least one"),
    (AttackSpec("udp", ("h1",), "h2", 0.0), "duration"),
    (AttackSpec("udp", ("h1",), "h2", 1.0, rate_pps=0), "rate_pps"),
])
def test_bad_specs_refused(graph, spec, match):
    with pytest.raises(ConfigError, match=match):
        check_spec(spec, graph)


def test_refusal_happens_before_any_start(graph, tmp_path):
    """One bad attack among good ones: nothing is started at all."""
    class NoHost:
        def popen(self, *a, **k):
            raise AssertionError("started a process")

    hosts = {h.name: NoHost() for h in graph.hosts}
    specs = [AttackSpec("udp", ("h1",), "h3", 1.0), AttackSpec("icmp", ("h2",), "127.0.0.1", 1.0)]
    with pytest.raises(ConfigError, match="127.0.0.1"):
        start_attacks(specs, hosts, graph, tmp_path)


def test_first_and_last_targets_and_sources(graph, tmp_path):
    targets, procs = plan_attacks([AttackSpec("udp", ("h2",), "first", 1.0),
                                   AttackSpec("udp", ["first", "h2"], "last", 1.0)], graph, tmp_path)
    assert [t.name for t in targets] == ["h1", "h3"]
    assert [p.source for p in procs[1]] == ["h1", "h2"]


# -- command lines -----------------------------------------------------------

def test_hping3_argv_rate_and_flood():
    udp = hping3_argv(AttackSpec("udp", ("h1",), "h3", 1.0, rate_pps=1000, size_bytes=64), "10.0.0.3")
    assert udp == ["hping3", "-q", "-n", "--udp", "-p", "9", "-i", "u1000", "-d", "64", "10.0.0.3"]
    syn = hping3_argv(AttackSpec("syn", ("h1",), "h3", 1.0, dst_port=6653), "10.0.0.3")
    assert syn == ["hping3", "-q", "-n", "-S", "-p", "6653", "--flood", "-d", "0", "10.0.0.3"]
    icmp = hping3_argv(AttackSpec("icmp", ("h1",), "h3", 1.0, rate_pps=3e6), "10.0.0.3")
    assert "--icmp" in icmp and "-p" not in icmp and icmp[icmp.index("-i") + 1] == "u1"
    assert "--rand-source" not in udp + syn + icmp      # it would spoof addresses outside 10/8


def test_tool_choice_and_sender_argv(graph):
    plain = AttackSpec("syn", ("h1",), "h3", 1.0)
    spoofed = AttackSpec("syn", ("h1",), "h3", 1.0, spoof=True, rate_pps=500)
    flows = AttackSpec("newflows", ("h1",), "h3", 1.0)
    assert (plain.tool, spoofed.tool, flows.tool) == ("hping3", "sender", "sender")
    argv = sender_argv(spoofed, graph.host("h1"), graph.host("h3"))
    assert argv[:3] == [sys.executable, "-u", attack_sender.__file__]
    args = attack_sender.parse_args(argv[3:])
    assert (args.kind, args.dst_ip, args.dst_mac, args.src_mac) == ("syn", "10.0.0.3", "00:00:00:00:00:03",
                                                                     "00:00:00:00:00:01")
    assert (args.rate_pps, args.spoof, args.dst_port, args.src_cidr) == (500.0, True, 80, "10.0.0.0/8")
    assert attack_sender.parse_args(sender_argv(flows, graph.host("h1"), graph.host("h3"))[3:]).rate_pps == 0


# -- output parsing ----------------------------------------------------------

def test_parse_recorded_hping3_statistics():
    assert parse_hping3_stats((DATA / "hping3-udp-flood.stderr").read_text()) == 190437
    assert parse_hping3_stats((DATA / "hping3-syn-u100.stderr").read_text()) == 9173
    assert parse_hping3_stats("hping3: unknown host\n") is None
    assert parse_hping3_stats("") is None


def test_parse_sender_output():
    ok = '{"type": "summary", "schema": 1, "data": {"sent": 12, "send_errors": 0}}\n'
    assert parse_sender_output(ok)[:2] == (12, None)
    err = '{"type": "error", "schema": 1, "data": {"message": "destination 8.8.8.8 is outside"}}\n'
    assert parse_sender_output(err)[:2] == (None, "destination 8.8.8.8 is outside")
    assert parse_sender_output("Traceback ...\n")[0] is None


# -- frames ------------------------------------------------------------------

def _csum_ok(data: bytes) -> bool:
    return attack_sender._fold(attack_sender._sum16(data)) == 0


@pytest.mark.parametrize("kind", ["udp", "syn", "icmp", "newflows"])
def test_frames_have_valid_checksums_and_sources_inside_range(kind):
    dst = ipaddress.ip_address("10.0.0.3")
    net = ipaddress.ip_network("10.1.0.0/16")
    b = attack_sender.FrameBuilder(kind, bytes(6), b"\0\0\0\0\0\1", dst, net, 18, 9,
                                   random_mac=kind == "newflows", random_ip=True, rng=random.Random(1))
    macs, ips = set(), set()
    for _ in range(500):
        f = bytes(b.next())
        ip, l4 = f[14:34], f[34:]
        assert _csum_ok(ip)
        src = ipaddress.ip_address(ip[12:16])
        assert src in net and ip[16:20] == dst.packed
        proto, total = ip[9], struct.unpack("!H", ip[2:4])[0]
        assert total == len(f) - 14
        if proto in (6, 17):
            pseudo = ip[12:20] + struct.pack("!BBH", 0, proto, len(l4))
            assert _csum_ok(pseudo + l4)
        else:
            assert _csum_ok(l4)
        if kind == "newflows":
            assert f[6] & 0x03 == 0x02          # locally administered unicast
        macs.add(f[6:12])
        ips.add(src)
    assert len(ips) > 490
    assert len(macs) == (500 if kind == "newflows" else 1)


@pytest.mark.parametrize("dst, cidr", [("8.8.8.8", "10.0.0.0/8"), ("127.0.0.1", "10.0.0.0/8"),
                                       ("10.0.0.3", "0.0.0.0/0"), ("10.0.0.3", "11.0.0.0/8")])
def test_sender_refuses_outside_addresses(dst, cidr, capsys):
    code = attack_sender.main(["--kind", "udp", "--dst-ip", dst, "--dst-mac", "00:00:00:00:00:03",
                               "--src-mac", "00:00:00:00:00:01", "--src-cidr", cidr, "--count", "1"])
    assert code == 2
    assert parse_sender_output(capsys.readouterr().out)[1].endswith("refused")


# -- scheduling (local stand-in processes, no namespaces) ------------------------

FAKE_HPING = r"""
import signal, sys, time
n = 0
def bye(*_):
    sys.stderr.write(f"\n--- 10.0.0.3 hping statistic ---\n{n} packets transmitted, 0 packets received\n")
    sys.exit(0)
signal.signal(signal.SIGINT, bye)
while True:
    n += 1
    time.sleep(0.01)
"""


class LocalHost:
    """Runs a stand-in for hping3 locally, in its own session like Mininet's popen."""

    def __init__(self, name: str):
        self.name = name
        self.started: list[subprocess.Popen] = []

    def popen(self, argv, **kwargs):
        assert "hping3" in argv, argv   # behind the start gate of sdnbench.procs
        proc = subprocess.Popen([sys.executable, "-c", FAKE_HPING], start_new_session=True, **kwargs)
        self.started.append(proc)
        return proc


def test_schedule_start_stop_and_counts(graph, tmp_path, monkeypatch):
    monkeypatch.setattr("shutil.which", lambda name: "/usr/sbin/" + name)
    hosts = {h.name: LocalHost(h.name) for h in graph.hosts}
    specs = [AttackSpec("udp", ("h1", "h2"), "h3", duration_s=0.8, start_s=0.3, rate_pps=100),
             AttackSpec("icmp", ("h1",), "h3", duration_s=30, start_s=0.2),
             AttackSpec("syn", ("h2",), "h3", duration_s=1.0, start_s=60)]
    run = start_attacks(specs, hosts, graph, tmp_path)
    try:
        time.sleep(1.6)
    finally:
        run.stop()
    first, long, never = run.results()
    assert first["errors"] == [] and len(first["sources"]) == 2
    for src in first["sources"]:
        assert src["start_s"] == pytest.approx(0.3, abs=0.5)
        assert src["stop_s"] == pytest.approx(1.1, abs=0.5)
        assert src["stop_s"] > src["start_s"]
        assert src["packets_sent"] > 10
    assert first["packets_sent"] == sum(s["packets_sent"] for s in first["sources"])
    assert long["sources"][0]["stop_s"] < 5 and long["packets_sent"] > 10    # cut short by stop()
    assert never["packets_sent"] is None and never["sources"][0]["start_s"] is None
    assert all(p.poll() is not None for h in hosts.values() for p in h.started)
