"""Reading and writing cache packs as this user's torchlint does (signed with the user's
key), so that tests can plant entries the cache must still validate field by field."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from torchlint.run.cache_key import signed, user_key, verified


def read_pack(path: Path) -> Any:
    body = verified(user_key(), path.name, path.read_bytes())
    assert body is not None, f"{path} is not signed with this user's key"
    return json.loads(body)


def write_pack(path: Path, data: Any) -> None:
    write_pack_text(path, json.dumps(data))


def write_pack_text(path: Path, text: str) -> None:
    path.write_bytes(signed(user_key(), path.name, text.encode("utf-8")))
