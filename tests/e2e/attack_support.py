"""Tools of the adversarial server tests: a chunked body sent lazily over a raw socket (only as much
as the server reads before it answers), and a process's resident memory read from ``/proc``.

A raw socket rather than an HTTP client: a client sends the whole body before it reads the answer,
so a refused 300 MB body would still be pushed through the connection; here the sender stops as
soon as the server has answered, and reports how much it had sent.
"""

from __future__ import annotations

import select
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

MB = 1024 * 1024
PIECE = b"x" * MB


def memory_kb(pid: int, field: str) -> int:
    """``VmRSS`` (now) or ``VmHWM`` (peak since the last reset) of process ``pid``, in kB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def reset_peak(pid: int) -> None:
    """Start ``VmHWM`` again from the current RSS (``clear_refs`` 5, Linux >= 4.0)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


@dataclass(frozen=True)
class Sent:
    status: int
    body: bytes
    sent_bytes: int
    peak_growth_kb: int


def chunked(prefix: bytes, total: int) -> Iterator[bytes]:
    """``prefix``, then filler up to ``total`` bytes, in 1 MB pieces made lazily."""
    yield prefix
    left = total - len(prefix)
    while left > 0:
        piece = PIECE[: min(left, MB)]
        left -= len(piece)
        yield piece


def send_chunked(
    port: int,
    method: str,
    path: str,
    headers: dict[str, str],
    body: Iterator[bytes],
    *,
    pid: int,
    timeout: float = 120.0,
) -> Sent:
    """Send ``body`` with ``Transfer-Encoding: chunked`` until the server answers (or the body
    ends); the server's peak RSS growth over the request, in kB."""
    reset_peak(pid)
    before = memory_kb(pid, "VmRSS")
    head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Transfer-Encoding: chunked"]
    head += [f"{k}: {v}" for k, v in headers.items()] + ["Connection: close", "", ""]
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall("\r\n".join(head).encode("latin-1"))
        pending = b""
        done = False
        while True:
            readable, writable, _ = select.select([sock], [] if done else [sock], [], timeout)
            if readable:
                break
            if not writable:
                raise TimeoutError(f"{method} {path}: no answer after {sent} bytes")
            if not pending:
                piece = next(body, None)
                if piece is None:
                    sock.sendall(b"0\r\n\r\n")
                    done = True
                    continue
                pending = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
                sent += len(piece)
            try:
                written = sock.send(pending)
            except (BrokenPipeError, ConnectionResetError):
                break
            pending = pending[written:]
        response = _read_response(sock)
    status = int(response.split(b" ", 2)[1])
    growth = memory_kb(pid, "VmHWM") - before
    return Sent(status, response.partition(b"\r\n\r\n")[2], sent, growth)


def _read_response(sock: socket.socket) -> bytes:
    data = b""
    while True:
        try:
            piece = sock.recv(65536)
        except (ConnectionResetError, TimeoutError):
            break
        if not piece:
            break
        data += piece
    return data


def _deflated_run(inflated_mb: int) -> bytes:
    """Raw deflate data of an XHTML page with ``inflated_mb`` MB of one letter, made in
    milliseconds: a full flush makes each 1 MB segment independent, so one is repeated."""
    import zlib

    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    head = z.compress(b"<html><body><p>") + z.flush(zlib.Z_FULL_FLUSH)
    segment = z.compress(PIECE.replace(b"x", b"a")) + z.flush(zlib.Z_FULL_FLUSH)
    tail = z.compress(b"</p></body></html>") + z.flush()
    return head + segment * inflated_mb + tail


def lying_epub(path: Path, *, inflated_mb: int, declared_kb: int = 300) -> Path:
    """An EPUB whose one chapter inflates to ``inflated_mb`` MB while its zip headers (local and
    central) declare ``declared_kb`` KB."""
    import struct
    import zlib

    opf = (
        b'<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        b'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Bomb</dc:title>'
        b'</metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/>'
        b'</manifest><spine><itemref idref="c1"/></spine></package>'
    )
    container = (
        b'<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
        b'xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type='
        b'"application/oebps-package+xml"/></rootfiles></container>'
    )
    members = [
        (b"mimetype", b"application/epub+zip", 0, None),
        (b"META-INF/container.xml", container, 0, None),
        (b"OEBPS/content.opf", opf, 0, None),
        (b"OEBPS/c1.xhtml", _deflated_run(inflated_mb), 8, declared_kb * 1024),
    ]
    local, central = bytearray(), bytearray()
    for name, data, method, declared in members:
        size = len(data) if declared is None else declared
        crc = zlib.crc32(data) if declared is None else 0
        fields = (method, 0, 0, crc, len(data), size, len(name), 0)
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, *fields, 0, 0, 0, 0,
                               len(local)) + name  # fmt: skip
        local += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, *fields) + name + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central),
                      len(local), 0)  # fmt: skip
    path.write_bytes(bytes(local + central + end))
    return path
