#!/usr/bin/env python3
"""Record real OpenFlow messages between Open vSwitch and ovs-testcontroller.

Usage (root, Open vSwitch running):  python3 record.py OpenFlow13 of13.txt

Creates bridge `sbofrec0` (userspace datapath), relays its controller
connection through this script to ovs-testcontroller, injects one packet with
`ovs-ofctl packet-out ... actions=table` so the table miss raises a PACKET_IN,
and also relays a few `ovs-ofctl` sessions (show, dump-ports-desc, probe,
add-flow with barrier) against the bridge's passive listener. Writes one
message per line: `<switch|controller> <hex>`.
Everything it starts or creates is removed on exit.
"""

import socket
import subprocess
import sys
import threading
import time

BRIDGE = "sbofrec0"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def relay(src: socket.socket, dst: socket.socket, who: str, out: list) -> None:
    """Copy src to dst, cutting the stream into messages by the header length."""
    buf = b""
    while True:
        try:
            data = src.recv(65536)
        except OSError:
            return
        if not data:
            return
        dst.sendall(data)
        buf += data
        while len(buf) >= 8 and len(buf) >= int.from_bytes(buf[2:4], "big"):
            n = int.from_bytes(buf[2:4], "big")
            out.append((who, buf[:n].hex()))
            buf = buf[n:]


def accept_loop(lsock: socket.socket, target: int, out: list) -> None:
    """Relay every connection on lsock to 127.0.0.1:target (switch is the target)."""
    while True:
        try:
            c, _ = lsock.accept()
        except OSError:
            return
        up = socket.create_connection(("127.0.0.1", target))
        threading.Thread(target=relay, args=(c, up, "controller", out), daemon=True).start()
        threading.Thread(target=relay, args=(up, c, "switch", out), daemon=True).start()


def listener(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:port."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(4)
    return s


def main() -> None:
    version, path = sys.argv[1], sys.argv[2]
    ctl_port, proxy_port, sw_port, ofctl_port = free_port(), free_port(), free_port(), free_port()
    ctl = subprocess.Popen(["ovs-testcontroller", "-O", version, f"ptcp:{ctl_port}:127.0.0.1"])
    lsock = listener(proxy_port)
    osock = listener(ofctl_port)
    msgs: list = []
    try:
        time.sleep(0.5)
        subprocess.run(["ovs-vsctl", "--", "add-br", BRIDGE, "--", "set", "bridge", BRIDGE,
                        "datapath_type=netdev", f"protocols={version}", "other-config:datapath-id=0000000000000042",
                        "--", "set-controller", BRIDGE, f"tcp:127.0.0.1:{proxy_port}",
                        f"ptcp:{sw_port}:127.0.0.1"], check=True)
        sw, _ = lsock.accept()
        up = socket.create_connection(("127.0.0.1", ctl_port))
        for a, b, who in ((sw, up, "switch"), (up, sw, "controller")):
            threading.Thread(target=relay, args=(a, b, who, msgs), daemon=True).start()
        time.sleep(2)
        threading.Thread(target=accept_loop, args=(osock, sw_port, msgs), daemon=True).start()
        ofctl = ["ovs-ofctl", "-O", version]
        target = f"tcp:127.0.0.1:{ofctl_port}"
        for cmd in (["show"], ["dump-ports-desc"], ["probe"], ["add-flow", "priority=5,dl_src=00:00:00:00:00:07,actions=drop"]):
            subprocess.run(ofctl + [cmd[0], target] + cmd[1:], check=True, stdout=subprocess.DEVNULL)
            time.sleep(0.3)
        frame = ("000000000002" "000000000001" "0800" "450000200000000040110000c0a80001c0a80002"
                 "0001000200080000" "00000000")
        subprocess.run(["ovs-ofctl", "-O", version, "packet-out", BRIDGE,
                        f"in_port=LOCAL,packet={frame},actions=table"], check=True)
        time.sleep(1)
    finally:
        subprocess.run(["ovs-vsctl", "--if-exists", "del-br", BRIDGE])
        ctl.terminate()
        ctl.wait(5)
        lsock.close()
        osock.close()
    with open(path, "w") as f:
        f.write(f"# {version}: Open vSwitch {BRIDGE} <-> ovs-testcontroller, recorded by record.py\n")
        for who, hexs in msgs:
            f.write(f"{who} {hexs}\n")
    print(f"{len(msgs)} messages -> {path}")


if __name__ == "__main__":
    main()
