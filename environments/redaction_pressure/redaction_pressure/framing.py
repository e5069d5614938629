"""Length-framed encodings: every hash input here is unambiguous.

Plain concatenation is ambiguous (``"ab" + "c" == "a" + "bc"``), so each part is preceded by
its length as 8 big-endian bytes. Integers are framed as their decimal text.
"""

from __future__ import annotations

import hashlib


def frame(*parts: bytes | str | int) -> bytes:
    out = bytearray()
    for part in parts:
        if isinstance(part, bool):
            raise TypeError("frame() takes bytes, str or int, not bool")
        if isinstance(part, int):
            data = str(part).encode("ascii")
        elif isinstance(part, str):
            data = part.encode("utf-8")
        else:
            data = bytes(part)
        out += len(data).to_bytes(8, "big") + data
    return bytes(out)


def sha256_hex(*parts: bytes | str | int) -> str:
    return hashlib.sha256(frame(*parts)).hexdigest()
