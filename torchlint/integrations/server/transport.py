"""The language server's stdio transport, in place of pygls's reader loop.

- Framing is linear in a message's size: a 64 MB body delays the next reply by the
  time it takes to arrive and parse, not by one copy of it per 64 KiB read.
- A wrong `Content-Length` does not leave the server deaf: a body is complete when the
  declared bytes are there and parse, or when the bytes before the next message's header
  parse (a length too short), or when what arrived is a whole JSON object already (a
  length too long); a malformed body is dropped with a log line.
- Requests after `shutdown` get an InvalidRequest error (pygls drops them unanswered);
  `exit` ends the server with 0 after `shutdown`, else 1.
- SIGTERM and SIGINT end the server promptly (pygls's reader thread would hold it until
  stdin closes).
- pygls 2.1.1 keeps the future of every notification it runs in `_request_futures`
  (only a request's is removed, by its response): the done ones are dropped a second
  after a message, so a long editing session does not grow the heap.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import signal
import threading
from typing import Callable, List, Optional

from lsprotocol import types

logger = logging.getLogger(__name__)

_HEADER_END = b"\r\n\r\n"
_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)", re.IGNORECASE)
_NEXT_HEADER = re.compile(rb"Content-Length:[ \t]*\d+\r\n", re.IGNORECASE)
INVALID_REQUEST = -32600
PRUNE_DELAY = 1.0  # seconds: the done futures of a second's messages are dropped together


def _is_json_object(data: bytes) -> bool:
    if not data.lstrip().startswith(b"{") or not data.rstrip().endswith(b"}"):
        return False
    try:
        json.loads(data)
    except ValueError:
        return False
    return True


def _ends_an_object(buffer: bytearray) -> bool:
    """Whether the last byte that is not white space is `}`; reads only the end."""
    end = len(buffer)
    while end > 0 and buffer[end - 1] in b" \t\r\n":
        end -= 1
    return end > 0 and buffer[end - 1] == ord("}")


class FrameReader:
    """Cuts a byte stream into message bodies (`feed` returns those completed); bodies
    that are not JSON objects are reported to `dropped` and skipped."""

    def __init__(self, dropped: Callable[[bytes], None] = lambda body: None) -> None:
        self._buffer = bytearray()
        self._dropped = dropped
        self._in_body = False  # the current message's header has been read
        self._length = 0
        self._scanned = 0  # how far the current body was searched for the next header

    def feed(self, chunk: bytes) -> List[bytes]:
        self._buffer += chunk
        bodies: List[bytes] = []
        while True:
            if not self._in_body and not self._read_header():
                return bodies
            body = self._take_body()
            if body is None:
                return bodies
            if _is_json_object(body):
                bodies.append(body)
            elif body.strip():
                self._dropped(body)

    def _read_header(self) -> bool:
        end = self._buffer.find(_HEADER_END)
        if end < 0:
            return False
        match = _LENGTH.search(self._buffer, 0, end)
        if match is None:  # not a header: skip it
            self._dropped(bytes(self._buffer[: end + len(_HEADER_END)]))
            del self._buffer[: end + len(_HEADER_END)]
            return self._read_header()
        self._length = int(match.group(1))
        del self._buffer[: end + len(_HEADER_END)]
        self._in_body, self._scanned = True, 0
        return True

    def _take_body(self) -> Optional[bytes]:
        """The current body if it is complete (see the module's doc), consumed; else None."""
        buffer, length = self._buffer, self._length
        if len(buffer) >= length and _is_json_object(bytes(buffer[:length])):
            return self._consume(length)  # as declared: the usual case
        # a header cannot occur inside a JSON body (a raw CR LF is not allowed in a string)
        following = _NEXT_HEADER.search(buffer, max(0, self._scanned - 32))
        if following is not None:  # declared too short, or not JSON: what comes before it
            return self._consume(following.start())
        self._scanned = len(buffer)
        # declared too long: a whole object came, and nothing after. Tried only where the
        # bytes end in `}`, so that a large body arriving in chunks is not copied and
        # parsed once per chunk (quadratic in its size)
        if _ends_an_object(buffer) and _is_json_object(bytes(buffer)):
            return self._consume(len(buffer))
        return None

    def _consume(self, size: int) -> bytes:
        body = bytes(self._buffer[:size])
        del self._buffer[:size]
        self._in_body = False
        return body


class StdioTransport:
    """Runs a pygls server over file descriptors until `exit`, end of input or a signal;
    `run` returns the exit code."""

    def __init__(self, server, stdin_fd: int, stdout, on_signal: Callable[[int], None]) -> None:
        """`on_signal(signum)`: called in the event loop on SIGTERM or SIGINT; it ends the
        process (handlers still running are not waited for, nor cancelled one by one)."""
        from pygls.io_ import StdoutWriter

        self.server = server
        self.protocol = server.protocol
        self.stdin_fd = stdin_fd
        self.protocol.set_writer(StdoutWriter(stdout))
        self.shut_down = False  # a `shutdown` request was answered
        self.exit_code: Optional[int] = None
        self._on_signal = on_signal
        self._stopped: Optional[asyncio.Event] = None
        self._pruning: Optional[asyncio.TimerHandle] = None

    def run(self) -> int:
        asyncio.run(self._run())
        if self.exit_code is not None:
            return self.exit_code
        return 0 if self.shut_down else 1

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        self._stopped = asyncio.Event()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, self._on_signal, signum)
        reader = FrameReader(lambda body: logger.warning("dropped a malformed message: %r", body[:200]))
        thread = threading.Thread(target=self._read, args=(loop, reader), name="torchlint-stdin", daemon=True)
        thread.start()
        await self._stopped.wait()

    def _read(self, loop: asyncio.AbstractEventLoop, reader: FrameReader) -> None:
        """In a daemon thread (a blocked read must never hold the process): bodies to the loop."""
        try:
            while True:
                chunk = os.read(self.stdin_fd, 1 << 16)
                if not chunk:
                    break
                for body in reader.feed(chunk):
                    loop.call_soon_threadsafe(self._dispatch, body)
        except OSError:
            pass
        try:
            loop.call_soon_threadsafe(self._stopped.set)
        except RuntimeError:  # the loop is closed: the server is gone already
            pass

    def _dispatch(self, body: bytes) -> None:
        if self._stopped.is_set():
            return
        try:
            message = json.loads(body, object_hook=self.protocol.structure_message)
        except Exception as error:  # valid JSON, but not a message pygls can read
            logger.warning("dropped a message that is not JSON-RPC: %s", error)
            return
        method = getattr(message, "method", None)
        request_id = getattr(message, "id", None)
        if self.shut_down and method not in (None, types.EXIT) and request_id is not None:
            error = types.ResponseError(INVALID_REQUEST, f"the server is shut down; {method} not served")
            self.protocol._send_response(request_id, error=error)
            return
        try:
            self.protocol.handle_message(message)
        except SystemExit as exit_:  # pygls's `exit`: 0 after shutdown, else 1
            self.exit_code = exit_.code if isinstance(exit_.code, int) else 1
            self._stopped.set()
        if method == types.SHUTDOWN:
            self.shut_down = True
        if self._pruning is None:  # a notification's future is done once its handler is
            self._pruning = asyncio.get_running_loop().call_later(PRUNE_DELAY, self._forget_done_futures)

    def _forget_done_futures(self) -> None:
        self._pruning = None
        futures = self.protocol._request_futures
        for key in [key for key, future in futures.items() if future.done()]:
            del futures[key]
