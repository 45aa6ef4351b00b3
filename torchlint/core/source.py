"""Bytes to text and back, the way Python reads a source file (PEP 263, BOM)."""

from __future__ import annotations

import os
import re
import tokenize
from dataclasses import dataclass

from torchlint.core.bounded_read import read_bounded

BOM = b"\xef\xbb\xbf"
# What a file of torchlint.core.large_files.MAX_CHARS characters can take in UTF-8; a
# longer file is refused from its size, before a byte is read.
MAX_SOURCE_BYTES = 128 * 1024 * 1024
# a line and its ending (\r\n, \r or \n), and the characters other than those that
# str.splitlines ends a line at
_LINE = re.compile(r"[^\r\n]*(?:\r\n?|\n)|[^\r\n]+")
_OTHER_LINE_BREAKS = re.compile("[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_BYTE_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


class DecodeError(Exception):
    """The bytes are not text in the encoding the file declares."""


@dataclass(frozen=True)
class SourceFile:
    """A decoded file and what it takes to write it back byte-compatibly."""

    text: str
    encoding: str
    bom: bool
    newline: str

    def encode(self, text: str) -> bytes:
        data = text.encode(self.encoding)
        return BOM + data if self.bom else data


def read_source(path: os.PathLike) -> bytes:
    """The bytes of a source file or notebook: ReadRefused for a FIFO, a device or a file
    over MAX_SOURCE_BYTES (told before reading, never blocking); OSError if unreadable."""
    return read_bounded(path, MAX_SOURCE_BYTES)


def detect_newline(text: str) -> str:
    first = text.find("\n")
    if first > 0 and text[first - 1] == "\r":
        return "\r\n"
    if first == -1 and "\r" in text:
        return "\r"
    return "\n"


def decode_source(data: bytes) -> SourceFile:
    """Decode as the interpreter would: a BOM, else a coding cookie, else UTF-8."""
    bom = data.startswith(BOM)
    try:
        encoding, _ = tokenize.detect_encoding(_byte_lines(data))
    except SyntaxError as error:
        raise DecodeError(str(error)) from None
    body = data[len(BOM):] if bom else data
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise DecodeError(f"cannot decode as {encoding}: {error}") from None
    return SourceFile(text=text, encoding=encoding, bom=bom, newline=detect_newline(text))


def _byte_lines(data: bytes):
    """A `readline` over the bytes that ends lines where Python does: a lone `\r` too
    (io.BytesIO would hand the whole of a CR-only file to detect_encoding as one line)."""
    lines = (match.group() for match in _BYTE_LINE.finditer(data))
    return lambda: next(lines, b"")


def split_lines(text: str) -> list:
    """Lines as Python's tokenizer counts them (only \\r\\n, \\r and \\n end a line),
    each with its line ending."""
    if _OTHER_LINE_BREAKS.search(text) is None:  # where str.splitlines would end a line too
        return text.splitlines(True)
    return _LINE.findall(text)
