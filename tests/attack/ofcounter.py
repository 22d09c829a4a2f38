"""A minimal OpenFlow 1.0 controller for tests: answers echo, installs nothing, records PACKET_INs."""

from __future__ import annotations

import socket
import struct
import threading

OFP10 = 1
HELLO, ECHO_REQUEST, ECHO_REPLY, PACKET_IN = 0, 2, 3, 10
PACKET_IN_HEAD = 8 + 10        # ofp_header + buffer_id, total_len, in_port, reason, pad


class PacketInCounter:
    """Listens on 127.0.0.1:<free port>; every switch that connects is served on its own thread."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.src_macs: list[bytes] = []       # source MAC of each PACKET_IN's frame, in order
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self._conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        conn.sendall(struct.pack("!BBHI", OFP10, HELLO, 8, 0))
        buf = b""
        while not self._stop.is_set():
            try:
                data = conn.recv(65536)
            except OSError:
                return
            if not data:
                return
            buf += data
            while len(buf) >= 8:
                _, kind, length, xid = struct.unpack("!BBHI", buf[:8])
                if len(buf) < length:
                    break
                msg, buf = buf[:length], buf[length:]
                if kind == ECHO_REQUEST:
                    conn.sendall(struct.pack("!BBHI", OFP10, ECHO_REPLY, length, xid) + msg[8:])
                elif kind == PACKET_IN and length >= PACKET_IN_HEAD + 12:
                    with self._lock:
                        self.src_macs.append(msg[PACKET_IN_HEAD + 6:PACKET_IN_HEAD + 12])

    def close(self) -> None:
        """Stop listening and drop every switch connection."""
        self._stop.set()
        self.sock.close()
        for c in self._conns:
            c.close()
