"""A pasted log's bytes made into the text `explain` reads, at a cost bounded by its size.

Huge logs are mostly one line repeated with other numbers: they are condensed on their
bytes (`knowledge.condense`, where dropping digits costs a fraction of what it costs on
text) before anything is decoded. What is still beyond MAX_READ (random bytes, a log of
distinct lines) is cut to its first HEAD bytes, where banners and `collect_env` sit, and
its last bytes, where the error is; `explain` says so. Decoding, anchor searches and the
evidence patterns then work on at most MAX_READ bytes, whatever was pasted.
"""

from __future__ import annotations

from typing import Optional, Tuple

from torchlint.explain.knowledge import condense

MAX_READ = 4 << 20
HEAD = 1 << 20


def log_text(data: bytes) -> Tuple[str, Optional[str]]:
    """The text to explain, and a note when part of the log was left out."""
    work = condense(data)
    if len(work) <= MAX_READ:
        return work.decode("utf-8", errors="replace"), None
    head = work[:HEAD]
    tail = work[len(work) - (MAX_READ - HEAD):]
    # cut at line ends, so that no line is read in part
    head = head[: head.rfind(b"\n") + 1] or head
    tail = tail[tail.find(b"\n") + 1:] or tail
    note = (f"the log holds {len(work):,} bytes of distinct lines; read its first {len(head):,} "
            f"and its last {len(tail):,}")
    return (head + tail).decode("utf-8", errors="replace"), note
