"""What an analysis derived from one definition's stdlib ast (a function, a method), read
back in the next version of the text where that definition is the same node object: the
language server's edit inside one definition keeps the nodes of all the others
(`torchlint.integrations.server.local_edit`), so only the edited one is analysed anew.

A result is kept with its context (what it read besides the node: the file's import table,
its module name, the class's `__init__` facts, ...) and read back only in an equal context.
The next version's memo (`following`) starts from this one's entries, less those that no
lint read for `KEPT_FOR` versions (a definition since edited, or an analysis the recent
lints did not need). The memo holds the nodes, never the other way round: a tree is freed
by reference counting once no kept entry names its definitions.

Cost: a dict lookup and a comparison of the context per definition asked about; `following`
is linear in the entries.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, Hashable, Optional, Tuple, TypeVar

Result = TypeVar("Result")
# (node, context, result, the last version that read it)
_Entry = Tuple[Any, Hashable, Any, int]


class DefinitionMemo:
    """The results of one version of a text, by (node, analysis)."""

    # versions an entry is kept for without a lint reading it
    KEPT_FOR = 8

    def __init__(self, version: int = 0, entries: Optional[Dict[Tuple[int, str], _Entry]] = None) -> None:
        self._version = version
        self._entries: Dict[Tuple[int, str], _Entry] = {} if entries is None else entries

    def following(self) -> "DefinitionMemo":
        """The memo of the next version of the text."""
        version = self._version + 1
        entries = {key: entry for key, entry in self._entries.items() if version - entry[3] <= self.KEPT_FOR}
        return DefinitionMemo(version, entries)

    def result(self, node, analysis: str, context: Hashable, compute: Callable[[], Result]) -> Result:
        """`compute()`, or what it gave for this very `node` in an equal `context`."""
        key = (id(node), analysis)
        kept = self._entries.get(key)
        # the node itself is kept with its result: while it lives, its id names no other node
        value = kept[2] if kept is not None and kept[0] is node and kept[1] == context else compute()
        self._entries[key] = (node, context, value, self._version)
        return value


class NoMemo:
    """Computes every time: a text linted once (the command line, flake8) has no next version."""

    def result(self, node, analysis: str, context: Hashable, compute: Callable[[], Result]) -> Result:
        return compute()


NO_MEMO = NoMemo()
