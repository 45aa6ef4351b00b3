"""The language server: the LSP's messages wired to the open documents, the code actions
and the background project pass (pygls does the protocol and keeps the texts)."""

from __future__ import annotations

import asyncio
import gc
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

from lsprotocol import types
from pygls import uris
from pygls.capabilities import get_capability
from pygls.lsp.server import LanguageServer

from torchlint import __version__
from torchlint.core.config_files import ConfigError
from torchlint.rule_api.registry import rule_infos
from torchlint.core.visible import visible
from torchlint.integrations.server import actions
from torchlint.integrations.server.documents import OpenDocument, OpenDocuments
from torchlint.integrations.server.protocol import NO_FINDINGS, Findings, findings_in, workspace_edit
from torchlint.integrations.server.settings import CONFIG_NAMES, display_name
from torchlint.integrations.server.transport import StdioTransport
from torchlint.integrations.server.workspace import Debounced, ProjectRequest, ProjectWorker
from torchlint.core.bounded_read import ReadRefused
from torchlint.core.source import DecodeError, decode_source, read_source

PYTHON_SUFFIXES = (".py", ".pyi")
PROJECT_DELAY = 0.3  # seconds from a save (or open, close) to the project pass
TYPING_DELAY = 1.0  # while typing, a pass waits for a pause: it would only compete with the lints
IDLE_DELAY = 1.5  # seconds without a lint before the heap is compacted
WATCHED = ("**/*.py", "**/*.pyi", *(f"**/{name}" for name in sorted(CONFIG_NAMES)))


class TorchlintServer(LanguageServer):
    """One client's session: its open documents and its workspace's project findings."""

    def __init__(self) -> None:
        super().__init__("torchlint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.infos = rule_infos()
        self.lint_thread = ThreadPoolExecutor(1, thread_name_prefix="torchlint-lint")
        self.pass_thread = ThreadPoolExecutor(1, thread_name_prefix="torchlint-project")
        self.documents = OpenDocuments(
            self.lint_thread,
            self._current,
            self._encoding,
            self.infos,
            self._linted,
            self._config_error,
            lambda message: self._tell(message, types.MessageType.Error, show=True),
            lambda: self.project.running(),
        )
        self.roots: Tuple[str, ...] = ()
        self.worker = ProjectWorker()
        self.project = Debounced(self._project_pass, PROJECT_DELAY)
        self.heap = Debounced(self._compact_heap, IDLE_DELAY)
        self.project_findings: Dict[str, Findings] = {}  # uri -> the latest pass's findings there
        self._told: Set[str] = set()
        self._register()

    def _register(self) -> None:
        handlers = {
            types.INITIALIZE: self.on_initialize,
            types.INITIALIZED: self.on_initialized,
            types.SHUTDOWN: self.on_shutdown,
            types.TEXT_DOCUMENT_DID_OPEN: self.on_open,
            types.TEXT_DOCUMENT_DID_CHANGE: self.on_change,
            types.TEXT_DOCUMENT_DID_SAVE: self.on_save,
            types.TEXT_DOCUMENT_DID_CLOSE: self.on_close,
            types.WORKSPACE_DID_CHANGE_WATCHED_FILES: self.on_watched_files,
            types.TEXT_DOCUMENT_CODE_ACTION: self.on_code_action,
            types.CODE_ACTION_RESOLVE: self.on_code_action_resolve,
        }
        code_actions = types.CodeActionOptions(
            code_action_kinds=[actions.QUICK_FIX, actions.FIX_ALL], resolve_provider=True
        )
        for method, handler in handlers.items():
            options = code_actions if method == types.TEXT_DOCUMENT_CODE_ACTION else None
            self.feature(method, options)(_function(handler))

    # ---- lifecycle ------------------------------------------------------------------

    def on_initialize(self, params: types.InitializeParams) -> None:
        folders = [uris.to_fs_path(folder.uri) for folder in params.workspace_folders or ()]
        if not folders and (params.root_uri or params.root_path):
            folders = [uris.to_fs_path(params.root_uri) if params.root_uri else params.root_path]
        folders = [folder for folder in folders if folder and os.path.isdir(folder)]
        if folders:
            # file names, the config of a folder without one, and the cache are those of
            # `torchlint check` run from the (first) workspace folder
            os.chdir(folders[0])
        self.roots = tuple(display_name(folder) for folder in folders)

    async def on_initialized(self, params: types.InitializedParams) -> None:
        self.documents.warm_up()
        self.project.request(delay=0)
        if get_capability(self.client_capabilities, "workspace.did_change_watched_files.dynamic_registration", False):
            watchers = [types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
            registration = types.Registration(
                id="torchlint-watched-files",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
            )
            try:
                await self.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            except Exception as error:  # saves still refresh the project's findings
                self._tell(f"torchlint: the client refused to watch files: {error}", types.MessageType.Log)

    def on_shutdown(self, params: None) -> None:
        self.project.cancel()
        self.heap.cancel()
        self.worker.close()

    # ---- documents ------------------------------------------------------------------

    async def on_open(self, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = uris.to_fs_path(uri)
        if path is None or "\0" in path or not path.endswith(PYTHON_SUFFIXES):  # `%00` names no file
            return
        self.documents.open(uri, Path(path), display_name(path))
        await self.documents.refresh(uri)
        self.project.request()

    async def on_change(self, params: types.DidChangeTextDocumentParams) -> None:
        if self.documents.get(params.text_document.uri) is None:
            return
        await self.documents.refresh(params.text_document.uri)
        self.project.request(delay=TYPING_DELAY)

    async def on_save(self, params: types.DidSaveTextDocumentParams) -> None:
        if Path(uris.to_fs_path(params.text_document.uri) or "").name in CONFIG_NAMES:
            await self._reconfigure()
        self.project.request()

    def on_close(self, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if self.documents.get(uri) is None:
            return
        self.documents.close(uri)
        self.publish(uri)  # the project's findings stay; the per-file ones go with the buffer
        self.project.request()

    async def on_watched_files(self, params: types.DidChangeWatchedFilesParams) -> None:
        if any(Path(uris.to_fs_path(change.uri) or "").name in CONFIG_NAMES for change in params.changes):
            await self._reconfigure()
        self.project.request()

    async def _reconfigure(self) -> None:
        self._told.clear()
        self.documents.reconfigure()
        for document in self.documents:
            await self.documents.refresh(document.uri)

    def _current(self, uri: str) -> Tuple[str, Optional[int]]:
        document = self.workspace.get_text_document(uri)
        return document.source, document.version

    def _encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    def _linted(self, document: OpenDocument) -> None:
        for error in document.latest.result.errors:
            self._tell(error, types.MessageType.Warning)
        self.publish(document.uri)
        self.heap.request()

    async def _compact_heap(self) -> None:
        """Collect, then freeze what survives: the open documents' parsed statements stay
        alive from version to version, and a full collection that scans them all during
        a lint cost it a third more at p90 (bench/lsp_latency.py). Done while idle."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()

    def _config_error(self, error: ConfigError) -> None:
        self._tell(f"torchlint: {error}", types.MessageType.Error, show=True)

    def report_server_error(self, error: Exception, source) -> None:
        """A notification that failed (a `didChange` for a document never opened, a URI
        no file has) is logged once, not shown: pygls's default pops up a window per
        message, which a client could make endless."""
        self._tell(f"torchlint: a message from the client failed: {error}", types.MessageType.Warning)

    def _tell(self, message: str, kind: types.MessageType, show: bool = False) -> None:
        """Log a problem once (and show it, if the user must act on it)."""
        message = visible(message)
        if message in self._told:
            return
        self._told.add(message)
        self.window_log_message(types.LogMessageParams(type=kind, message=message))
        if show:
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def publish(self, uri: str) -> None:
        """The document's own findings (or, while it does not parse, the last good ones and
        the syntax error), then the project's findings there."""
        document = self.documents.get(uri)
        shown = document.shown() if document else []
        project = self.project_findings.get(uri, NO_FINDINGS)
        version = document.latest.version if document and document.latest else None
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=shown + list(project.published), version=version)
        self.text_document_publish_diagnostics(params)

    # ---- code actions ---------------------------------------------------------------

    async def on_code_action(self, params: types.CodeActionParams) -> List[types.CodeAction]:
        uri = params.text_document.uri
        document = await self.documents.actionable(uri)
        if document is None or document.latest is None:
            return []
        latest = document.latest
        only = params.context.only
        found: List[types.CodeAction] = []
        if actions.wanted(actions.QUICK_FIX, only):
            rows = (params.range.start.line + 1, params.range.end.line + 1)
            make_edit = self._edit_maker(uri, latest.version)
            found += actions.quick_fixes(latest.findings, rows, self._encoding(), make_edit)
            project = self.project_findings.get(uri, NO_FINDINGS)
            if project.text == latest.findings.text:  # else its positions are of an older text
                found += actions.quick_fixes(project, rows, self._encoding(), make_edit)
        if actions.wanted(actions.FIX_ALL, only) and actions.has_safe_fix(latest.result.diagnostics):
            action = actions.fix_all_action({"uri": uri, "version": latest.version})
            resolvable = get_capability(self.client_capabilities, "text_document.code_action.resolve_support.properties", [])
            if "edit" not in resolvable:
                action = await self.on_code_action_resolve(action)
            found.append(action)
        return found

    async def on_code_action_resolve(self, action: types.CodeAction) -> types.CodeAction:
        if action.kind != actions.FIX_ALL or not isinstance(action.data, dict):
            return action
        document = await self.documents.refresh(action.data.get("uri", ""), complete=True)
        if document is None or document.latest is None or document.latest.version != action.data.get("version"):
            return action  # the document changed since: no edit, rather than a wrong one
        before = document.latest.findings.text
        after = await self.documents.fixed(document, before)
        edits = actions.whole_text_edit(before, after, self._encoding())
        action.edit = self._edit_maker(document.uri, document.latest.version)(edits)
        return action

    def _edit_maker(self, uri: str, version: Optional[int]):
        versioned = bool(get_capability(self.client_capabilities, "workspace.workspace_edit.document_changes", False))
        return lambda edits: workspace_edit(uri, version, edits, versioned and version is not None)

    # ---- the project pass -----------------------------------------------------------

    async def _project_pass(self) -> None:
        if not self.roots:
            return
        # the latest complete version's facts (a carried one has none; it differs only in
        # comments); a document never linted through is read from disk, as it still is
        texts = {d.display: d.settled.findings.text for d in self.documents if d.settled is not None}
        facts = {d.display: d.settled.result.facts for d in self.documents if d.settled is not None}
        request = ProjectRequest(os.getcwd(), self.roots, facts)
        try:
            answer = await asyncio.get_running_loop().run_in_executor(self.pass_thread, self.worker.ask, request)
        except Exception as error:  # the server goes on with the findings it has
            self._tell(f"torchlint: project pass failed: {error}", types.MessageType.Error)
            return
        for error in answer.errors:
            self._tell(error, types.MessageType.Warning)
        found: Dict[str, Findings] = {}
        for display, diagnostics in answer.findings.items():
            if not display.endswith(PYTHON_SUFFIXES):
                continue
            text = texts.get(display)
            if text is None:
                text = _disk_text(display)
            diagnostics = self.documents.project_not_baselined(diagnostics, display, text)
            found[uris.from_fs_path(os.path.abspath(display))] = findings_in(
                text, diagnostics, self._encoding(), self.infos
            )
        changed = {uri for uri in found.keys() | self.project_findings.keys() if found.get(uri) != self.project_findings.get(uri)}
        self.project_findings = found
        for uri in sorted(changed):
            self.publish(uri)


def _function(method):
    """A plain function calling `method`: pygls marks its handlers with attributes, which a
    bound method cannot carry."""
    if asyncio.iscoroutinefunction(method):

        async def handler(params):
            return await method(params)

    else:

        def handler(params):
            return method(params)

    return handler


def _disk_text(display: str) -> str:
    try:
        return decode_source(read_source(Path(display))).text
    except (OSError, ReadRefused, DecodeError):
        return ""


def serve() -> int:
    """Serve one client over stdin/stdout until it says exit (the exit code the LSP asks
    for) or stdin ends; SIGTERM / SIGINT end it at once (143 / 130), the project pass's
    child process first."""
    stdout = sys.stdout.buffer
    sys.stdout = sys.stderr  # a stray print must not corrupt the protocol stream
    server = TorchlintServer()

    def stop(signum: int) -> None:
        server.worker.close()
        print(f"torchlint server: {'terminated' if signum == signal.SIGTERM else 'interrupted'}", file=sys.stderr)
        sys.stderr.flush()
        os._exit(128 + signum)  # a lint still running in its thread is not waited for

    try:
        return StdioTransport(server, sys.stdin.fileno(), stdout, stop).run()
    finally:
        server.worker.close()
        server.lint_thread.shutdown(wait=False, cancel_futures=True)
        server.pass_thread.shutdown(wait=False, cancel_futures=True)
