"""A real LSP client (pygls's) driving `torchlint server` over stdio in a subprocess, with
a transcript of what went each way and when. Plain asyncio: each test runs its scenario
with `asyncio.run`, so the suite needs no asyncio plugin."""

from __future__ import annotations

import asyncio
import re
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional, Sequence

from lsprotocol import types
from pygls import uris
from pygls.lsp.client import LanguageClient

REPO = Path(__file__).resolve().parent.parent
LINE_END = re.compile(r"\r\n|\r|\n")

DEFAULT_CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(position_encodings=[types.PositionEncodingKind.Utf16]),
    text_document=types.TextDocumentClientCapabilities(
        code_action=types.CodeActionClientCapabilities(
            resolve_support=types.ClientCodeActionResolveOptions(properties=["edit"]),
        ),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
    ),
    workspace=types.WorkspaceClientCapabilities(
        workspace_edit=types.WorkspaceEditClientCapabilities(document_changes=True),
    ),
)


class Session:
    """One server process, its client, the diagnostics it published, and a transcript."""

    def __init__(self, root: Path, capabilities: types.ClientCapabilities = DEFAULT_CAPABILITIES) -> None:
        self.root = root
        self.capabilities = capabilities
        self.client = LanguageClient("torchlint-tests", "1")
        self.published: Dict[str, List[types.PublishDiagnosticsParams]] = {}
        self.transcript: List[str] = []
        self.stderr = bytearray()
        self.versions: Dict[str, int] = {}
        self.arrival_times: Dict[tuple, float] = {}  # (uri, version) -> when its first diagnostics came
        self.publish_times: Dict[str, List[float]] = {}  # uri -> when each of `published[uri]` came
        self.texts: Dict[str, str] = {}
        self._start = time.perf_counter()
        self._arrived = asyncio.Event()
        self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)(lambda params: self._on_publish(params))
        self.client.feature(types.CLIENT_REGISTER_CAPABILITY)(lambda params: None)
        self.client.feature(types.WINDOW_LOG_MESSAGE)(lambda params: self.note("<-", f"log: {params.message}"))
        self.client.feature(types.WINDOW_SHOW_MESSAGE)(lambda params: self.note("<-", f"show: {params.message}"))

    def note(self, direction: str, what: str) -> None:
        self.transcript.append(f"{(time.perf_counter() - self._start) * 1000:8.1f} ms  {direction} {what}")

    async def __aenter__(self) -> "Session":
        # started elsewhere than the workspace: the server must make the root its own
        await self.client.start_io(sys.executable, "-m", "torchlint", "server", cwd=str(REPO / "tests"))
        self._drain = asyncio.create_task(self._drain_stderr())
        self.note("->", "initialize")
        result = await self.client.initialize_async(
            types.InitializeParams(
                capabilities=self.capabilities,
                root_uri=uris.from_fs_path(str(self.root)),
                workspace_folders=[types.WorkspaceFolder(uris.from_fs_path(str(self.root)), self.root.name)],
            )
        )
        self.server_capabilities = result.capabilities
        self.note("<-", f"initialize result (positionEncoding={result.capabilities.position_encoding})")
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
            await asyncio.wait_for(self.client.stop(), 10)
        finally:
            if self.client._server is not None and self.client._server.returncode is None:
                self.client._server.kill()
        self._drain.cancel()
        problems = self.stderr.decode(errors="replace")
        assert "Traceback" not in problems and "error" not in problems.lower(), problems

    async def _drain_stderr(self) -> None:
        while self.client._server is not None:
            chunk = await self.client._server.stderr.read(4096)
            if not chunk:
                return
            self.stderr.extend(chunk)

    def _on_publish(self, params: types.PublishDiagnosticsParams) -> None:
        codes = ", ".join(f"{d.code}@{d.range.start.line + 1}" for d in params.diagnostics)
        self.note("<-", f"publishDiagnostics {Path(uris.to_fs_path(params.uri)).name} v{params.version}: [{codes}]")
        self.published.setdefault(params.uri, []).append(params)
        now = time.perf_counter()
        self.publish_times.setdefault(params.uri, []).append(now)
        self.arrival_times.setdefault((params.uri, params.version), now)
        self._arrived.set()

    # ---- documents ----------------------------------------------------------------

    def uri(self, name: str) -> str:
        return uris.from_fs_path(str(self.root / name))

    def open(self, name: str, text: Optional[str] = None) -> str:
        uri = self.uri(name)
        text = (self.root / name).read_text(encoding="utf-8") if text is None else text
        self.versions[uri], self.texts[uri] = 1, text
        self.note("->", f"didOpen {name} v1")
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
        )
        return uri

    def change(self, uri: str, edits: Sequence[types.TextEdit]) -> int:
        """Send `edits` as incremental changes (in the order given); the new version."""
        self.versions[uri] += 1
        changes = [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits]
        for change in changes:
            self.texts[uri] = apply_text_edits(self.texts[uri], [types.TextEdit(change.range, change.text)])
        self.note("->", f"didChange {Path(uris.to_fs_path(uri)).name} v{self.versions[uri]}")
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]), changes
            )
        )
        return self.versions[uri]

    def replace_all(self, uri: str, text: str) -> int:
        old = self.texts[uri]
        return self.change(uri, [types.TextEdit(whole_range(old), text)])

    def apply(self, uri: str, edit: types.WorkspaceEdit) -> int:
        """Apply a server's WorkspaceEdit to the document, as an editor does (one didChange)."""
        edits = text_edits_for(uri, edit)
        ordered = sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)
        return self.change(uri, ordered)

    async def diagnostics(
        self,
        uri: str,
        version: Optional[int] = None,
        until: Callable[[List[types.Diagnostic]], bool] = lambda found: True,
        timeout: float = 60,
    ) -> List[types.Diagnostic]:
        """The first diagnostics published for `uri` (at `version`, if given) that satisfy
        `until`, waiting for them."""

        def ready():
            for params in reversed(self.published.get(uri, [])):
                if version is None or params.version == version:
                    return params.diagnostics if until(params.diagnostics) else None
            return None

        deadline = time.perf_counter() + timeout
        while True:
            found = ready()
            if found is not None:
                return found
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), max(0.0, deadline - time.perf_counter()))

    async def code_actions(self, uri: str, line: int, only: Optional[List[str]] = None) -> List[types.CodeAction]:
        """The actions for a cursor at the start of `line` (1-based)."""
        cursor = types.Position(line - 1, 0)
        self.note("->", f"codeAction line {line}" + (f" only={only}" if only else ""))
        found = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri),
                range=types.Range(cursor, cursor),
                context=types.CodeActionContext(diagnostics=[], only=only),
            )
        )
        found = found or []
        self.note("<-", f"codeAction result: {[action.title for action in found]}")
        return found

    async def resolve(self, action: types.CodeAction) -> types.CodeAction:
        self.note("->", f"codeAction/resolve {action.title!r}")
        resolved = await self.client.code_action_resolve_async(action)
        self.note("<-", f"codeAction/resolve result (edit: {resolved.edit is not None})")
        return resolved


def run(scenario, timeout: float = 120):
    """Run an async scenario to its end (a hung server fails the test, never the suite)."""
    return asyncio.run(asyncio.wait_for(scenario, timeout))


# ---- text edits, applied as an editor applies them (UTF-16 positions) ------------------


def whole_range(text: str) -> types.Range:
    lines = split(text)
    return types.Range(types.Position(0, 0), types.Position(len(lines) - 1, utf16_length(lines[-1])))


def split(text: str) -> List[str]:
    """The lines as the LSP counts them, without their endings (a final empty one too)."""
    return LINE_END.split(text)


def utf16_length(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def offset_of(text: str, position: types.Position) -> int:
    starts = [0] + [match.end() for match in LINE_END.finditer(text)]
    line_start = starts[position.line]
    line = split(text)[position.line]
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return line_start + index
        units += utf16_length(char)
    return line_start + len(line)


def apply_text_edits(text: str, edits: Sequence[types.TextEdit]) -> str:
    spans = sorted(
        ((offset_of(text, e.range.start), offset_of(text, e.range.end), e.new_text) for e in edits), reverse=True
    )
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def text_edits_for(uri: str, edit: types.WorkspaceEdit) -> List[types.TextEdit]:
    if edit.document_changes:
        return [e for change in edit.document_changes if change.text_document.uri == uri for e in change.edits]
    return list((edit.changes or {}).get(uri, []))
