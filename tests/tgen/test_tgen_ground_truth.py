"""sdnbench-tgen against ground truth on two namespaces joined by one veth pair."""

from __future__ import annotations

import math
import subprocess

import pytest

from .nspair import finish, free_port, python_in, start_receiver, summaries, tgen_binary

pytestmark = pytest.mark.netns

#: Sends crafted probes (argv: dst port seqs fin_count) plus malformed datagrams.
CRAFTED = r"""
import socket, struct, sys, time
dst, port, seqs, fin = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
boot = bytes.fromhex(open('/proc/sys/kernel/random/boot_id').read().strip().replace('-', ''))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
def probe(kind, seq):
    now = time.time_ns()
    return struct.pack('>HBBIQQQ', 0x5354, 0x10 | kind, 0, 9, seq, now, now)
for q in map(int, seqs.split(',')):
    s.sendto(probe(0, q) + bytes(32), (dst, port)); time.sleep(0.002)
for junk in (b'xx', bytes(40), struct.pack('>HBB', 0x5354, 0x20, 0) + bytes(28),
             struct.pack('>HBB', 0x5354, 0x1f, 0) + bytes(28), probe(0, 1)[:20]):
    s.sendto(junk, (dst, port)); time.sleep(0.002)
for _ in range(3):
    s.sendto(probe(1, fin) + boot, (dst, port)); time.sleep(0.002)
"""


def send(host, *args: str) -> tuple[int, list[dict]]:
    """Runs `sdnbench-tgen send` in host; returns exit code and sender summaries."""
    r = host.run([str(tgen_binary()), "send", *args], timeout=120)
    return r.returncode, summaries(r.stdout, "sender")


def test_exact_count_arrives_without_loss(ns_pair):
    port = free_port()
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}"])
    code, tx = send(ns_pair.a, "--to", f"{ns_pair.b.ip}:{port}", "--rate", "20kpps", "--count", "5000")
    rcode, out = finish(rx)
    assert (code, rcode) == (0, 0)
    r = summaries(out, "receiver")[0]
    assert tx[0]["tx_pkts"] == 5000 and tx[0]["missed_slots"] == 0
    assert (r["rx_pkts"], r["loss_pkts"], r["duplicate_pkts"], r["reordered_pkts"]) == (5000, 0, 0, 0)
    assert r["same_kernel"] is True and r["owd_valid"] is True and r["clock"] == "CLOCK_REALTIME"
    assert 0 < r["owd_min_ms"] <= r["owd_p50_ms"] <= r["owd_p99_ms"] <= r["owd_max_ms"]
    assert r["rx_payload_bytes"] == 5000 * 64


@pytest.mark.parametrize("k,gso", [(7, False), (2, False), (7, True)])
def test_nftables_drop_every_kth_packet_is_counted_exactly(ns_pair, k, gso):
    port, n = free_port(), 1000
    extra = []
    if gso:
        # Segment at the veth so nftables sees each datagram of a GSO batch as its own packet.
        dev = ns_pair.names[0]
        ns_pair.a.run(["ethtool", "-K", dev, "gso", "off", "tx-udp-segmentation", "off"]).check_returncode()
        extra = ["--gso"]
    # Drop every k-th *data* probe (kind nibble at UDP payload byte 2 == 0x10); end markers pass.
    rule = (f"table inet sbtgdrop {{\n chain in {{\n type filter hook input priority 0; policy accept;\n"
            f"  udp dport {port} @th,80,8 0x10 numgen inc mod {k} 0 counter drop\n }}\n}}\n")
    subprocess.run(["ip", "netns", "exec", ns_pair.b.ns, "nft", "-f", "-"], input=rule, text=True, check=True)
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}"])
    code, tx = send(ns_pair.a, "--to", f"{ns_pair.b.ip}:{port}", "--rate", "100kpps", "--count", str(n), *extra)
    _, out = finish(rx)
    listing = ns_pair.b.run(["nft", "list", "table", "inet", "sbtgdrop"]).stdout
    dropped = int(listing.split("counter packets ")[1].split()[0])
    r = summaries(out, "receiver")[0]
    assert tx[0]["gso"] is gso and dropped == math.ceil(n / k)
    assert (r["loss_pkts"], r["rx_pkts"], r["expected_pkts"]) == (dropped, n - dropped, n)
    assert r["loss_pct"] == pytest.approx(100.0 * dropped / n)


@pytest.mark.parametrize("seqs,fin,expect", [
    ("0,1,2,4,3,5,5,6,8,7,9", 10, dict(rx_pkts=10, duplicate_pkts=1, reordered_pkts=2, loss_pkts=0)),
    ("0,2,2,1,5", 7, dict(rx_pkts=4, duplicate_pkts=1, reordered_pkts=1, loss_pkts=3)),
])
def test_injected_reordering_duplicates_and_garbage(ns_pair, seqs, fin, expect):
    port = free_port()
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}"])
    r = python_in(ns_pair.a, CRAFTED, ns_pair.b.ip, str(port), seqs, str(fin))
    assert r.returncode == 0, r.stderr
    _, out = finish(rx)
    flow = summaries(out, "receiver")[0]
    assert {key: flow[key] for key in expect} == expect
    assert flow["expected_pkts"] == fin and flow["same_kernel"] is True
    total = summaries(out, "receiver-total")[0]
    assert (total["truncated_pkts"], total["bad_magic_pkts"], total["bad_version_pkts"],
            total["bad_kind_pkts"]) == (2, 1, 1, 1)


def test_echo_mode_measures_round_trip(ns_pair):
    port = free_port()
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}", "--echo"])
    code, tx = send(ns_pair.a, "--to", f"{ns_pair.b.ip}:{port}", "--echo", "--rate", "1kpps",
                    "--count", "300", "--payload", "64B", "--linger", "300ms")
    finish(rx)
    s = tx[0]
    assert code == 0 and s["meter"] == "rtt"
    assert (s["rx_pkts"], s["loss_pkts"], s["duplicate_pkts"]) == (300, 0, 0)
    assert 0 < s["owd_forward_mean_ms"] < s["rtt_mean_ms"]
    assert s["rtt_mean_ms"] == pytest.approx(s["owd_forward_mean_ms"] + s["owd_reverse_mean_ms"], rel=1e-6)


def test_tcp_bulk_by_size_delivers_every_byte(ns_pair):
    port = free_port()
    rx = start_receiver(ns_pair.b, ["--proto", "tcp", "--bind", f"{ns_pair.b.ip}:{port}"])
    code, tx = send(ns_pair.a, "--proto", "tcp", "--to", f"{ns_pair.b.ip}:{port}", "--size", "20MB")
    _, out = finish(rx)
    s, r = tx[0], summaries(out, "receiver")[0]
    assert code == 0
    assert s["tx_bytes"] == s["bytes_confirmed"] == r["bytes"] == 20_000_000
    assert s["tcp_connect_ms"] > 0 and s["transfer_time_s"] > 0 and s["retransmits"] is not None


def test_voip_preset_and_min_rate_threshold(ns_pair):
    port = free_port()
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}"])
    code, tx = send(ns_pair.a, "--to", f"{ns_pair.b.ip}:{port}", "--preset", "g711", "--count", "25")
    _, out = finish(rx)
    r = summaries(out, "receiver")[0]
    assert code == 0 and tx[0]["requested_pps"] == 50 and tx[0]["payload_mean_bytes"] == 172
    assert (r["rx_pkts"], r["rx_payload_bytes"]) == (25, 25 * 172)
    # 0.48 s of schedule (25 slots at 50 pps) cannot be met by any sender in 0 s: threshold 10x is unmeetable.
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}"])
    code, tx = send(ns_pair.a, "--to", f"{ns_pair.b.ip}:{port}", "--rate", "1kpps", "--count", "50",
                    "--min-rate-ratio", "10")
    finish(rx)
    assert code == 1 and tx[0]["rate_ok"] is False


def test_video_stream_frames_and_stalls(ns_pair):
    port = free_port()
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}", "--playout-buffer", "200ms"])
    code, tx = send(ns_pair.a, "--to", f"{ns_pair.b.ip}:{port}", "--video-bitrate", "4Mbps", "--fps", "25",
                    "--duration", "2s")
    _, out = finish(rx)
    v = summaries(out, "receiver")[0]["video"]
    # 2 s at 25 frames/s is exactly 50 frames; an unshaped veth delivers all without a stall.
    assert code == 0 and (v["frames_expected"], v["frames_complete"], v["stalls"]) == (50, 50, 0)
    assert 160 <= v["startup_delay_ms"] < 400
    # Shape the sender's veth below the stream's bit rate: the queue grows past the buffer.
    dev = ns_pair.names[0]
    ns_pair.a.run(["tc", "qdisc", "add", "dev", dev, "root", "tbf", "rate", "3mbit", "burst", "32kb",
                   "latency", "2s"]).check_returncode()
    rx = start_receiver(ns_pair.b, ["--bind", f"{ns_pair.b.ip}:{port}", "--playout-buffer", "200ms"])
    send(ns_pair.a, "--to", f"{ns_pair.b.ip}:{port}", "--video-bitrate", "4Mbps", "--duration", "2s")
    _, out = finish(rx)
    v = summaries(out, "receiver")[0]["video"]
    assert v["stalls"] >= 1 and v["stall_total_ms"] > 0
