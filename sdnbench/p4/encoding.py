"""Values of P4Runtime fields as canonical bytestrings of a given bit width (P4Runtime spec 8.4)."""

from __future__ import annotations

import ipaddress

from sdnbench.errors import SdnbenchError


class EncodingError(SdnbenchError):
    """A value does not fit the field it was meant for."""


def to_int(value) -> int:
    """An int from an int, bytes, a MAC ("aa:bb:..."), an IPv4/IPv6 address or a decimal/hex string."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, (bytes, bytearray)):
        return int.from_bytes(value, "big")
    if isinstance(value, str):
        text = value.strip()
        if text.count(":") == 5 and all(len(part) <= 2 for part in text.split(":")):
            return int(text.replace(":", ""), 16)
        try:
            return int(ipaddress.ip_address(text))
        except ValueError:
            pass
        try:
            return int(text, 0)
        except ValueError:
            pass
    raise EncodingError(f"cannot read {value!r} as a number, MAC or IP address")


def encode(value, bitwidth: int) -> bytes:
    """Canonical bytestring: big-endian, no leading zero bytes, zero as one zero byte."""
    number = to_int(value)
    if number < 0 or number >= 1 << bitwidth:
        raise EncodingError(f"{value!r} does not fit in {bitwidth} bits")
    return number.to_bytes(max(1, (number.bit_length() + 7) // 8), "big")


def decode(data: bytes) -> int:
    """The unsigned number a bytestring holds (canonical or padded)."""
    return int.from_bytes(data, "big")


def mac(text: str) -> int:
    """A MAC address as a number."""
    return to_int(text)


def mac_text(number: int) -> str:
    """A number as a MAC address "aa:bb:cc:dd:ee:ff"."""
    return ":".join(f"{b:02x}" for b in number.to_bytes(6, "big"))
