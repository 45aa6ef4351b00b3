"""The open documents: how each is configured, what the per-file pass found in its latest
version, and in the latest version that parsed (shown while the text does not parse)."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable, Dict, FrozenSet, Iterator, List, Optional, Tuple

from lsprotocol import types

from torchlint.core.config import Config
from torchlint.run.baseline import BaselineError, without_baselined
from torchlint.core.config_files import ConfigError
from torchlint.engine import describe, lint_text
from torchlint.fixing.apply import fix_text
from torchlint.core.diagnostics import SYNTAX_CODE, FileResult, RuleInfo
from torchlint.rule_api.registry import all_rules
from torchlint.run.jobs import RunSettings, rules_for
from torchlint.integrations.server import local_edit, reuse
from torchlint.integrations.server.protocol import Findings, findings_in
from torchlint.integrations.server.settings import SettingsByDirectory
from torchlint.integrations.server.workspace import Debounced
from torchlint.core.incremental_parse import StatementParser

# seconds without an edit before a local lint's findings are checked by a complete one
SETTLE_DELAY = 0.5
# a finding with a fix: the parse, positions and fixes all run once
WARM_UP = "def reset(optimizer):\n    optimizer.zero_grad(set_to_none=False)\n"


@dataclass(frozen=True)
class Linted:
    """One version of a document and what the per-file pass found in it; or, not
    `complete`, its findings known without that pass (`reuse`: carried over from the
    version before, or cached by `torchlint check`): the same, without fixes or facts."""

    version: Optional[int]
    result: FileResult
    findings: Findings
    complete: bool = True
    local: bool = False  # found by linting the edited definitions alone (`local_edit`): a complete lint follows
    strings: Optional[FrozenSet[int]] = None  # the rows inside its strings, where the lint knew them

    @property
    def parses(self) -> bool:
        return not any(d.code == SYNTAX_CODE for d in self.result.diagnostics)


@dataclass
class OpenDocument:
    uri: str
    path: Path
    display: str
    settings: Optional[RunSettings] = None  # None while its config file is wrong
    latest: Optional[Linted] = None
    good: Optional[Linted] = None  # the latest version that parsed
    settled: Optional[Linted] = None  # the latest complete version that parsed
    strings: Optional["asyncio.Future[FrozenSet[int]]"] = None  # the rows inside strings of the latest version
    parser: StatementParser = field(default_factory=StatementParser)  # used by one lint at a time
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    outline: Optional[local_edit.Outline] = None  # of the latest text the lint thread outlined
    settle: Optional[Debounced] = None  # the complete lint that follows a local one
    unsettled: bool = False  # shown findings rest on a local lint (`Linted.local`), perhaps carried since

    def shown(self) -> List[types.Diagnostic]:
        if self.latest is None:
            return []
        if self.latest.parses or self.good is None:
            return list(self.latest.findings.published)
        return list(self.good.findings.published) + list(self.latest.findings.published)

    def record(self, linted: Linted, executor: Executor) -> None:
        self.latest = linted
        if linted.local or linted.complete:
            self.unsettled = linted.local
        if linted.parses:
            self.good = linted
        # a carried version keeps the strings (and rows) of the one before
        if linted.complete or linted.local or self.strings is None:
            self.strings = None
            if linted.strings is not None:
                self.strings = asyncio.get_running_loop().create_future()
                self.strings.set_result(linted.strings)
            elif linted.parses:
                # found while the user reads, before the first edit wants them
                self.strings = asyncio.get_running_loop().run_in_executor(
                    executor, reuse.string_rows, lintable(linted.findings.text)
                )
        if linted.complete and linted.parses:
            self.settled = linted


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def lintable(text: str) -> str:
    """The text with each lone surrogate (an editor's buffer may hold one, which no file
    can: it would make the whole text one TL000) as U+FFFD, one code point and one UTF-16
    unit for another, so that every position holds."""
    return _LONE_SURROGATE.sub("\ufffd", text) if _LONE_SURROGATE.search(text) else text


def lint_document(text: str, display: str, settings: RunSettings, parser: Optional[StatementParser] = None) -> FileResult:
    return lint_text(lintable(text), display, settings.config, rules_for(display, settings), parser=parser)


def fix_document(text: str, display: str, settings: RunSettings) -> str:
    """The text with every safe fix applied, as `torchlint check --fix` would; unchanged
    while it holds a lone surrogate (fixing `lintable`'s text would replace it)."""
    if lintable(text) != text:
        return text
    rules = rules_for(display, settings)
    parser = StatementParser()  # each round changes a few statements of the last one's text

    def lint(current: str) -> FileResult:
        return lint_text(current, display, settings.config, rules, parser=parser)

    return fix_text(text, lint, unsafe=False).text


class OpenDocuments:
    """Lints open documents in `executor` (one thread: lints never contend for the GIL),
    at most one lint per document at a time and only of its newest text."""

    def __init__(
        self,
        executor: Executor,
        current: Callable[[str], Tuple[str, Optional[int]]],
        encoding: Callable[[], str],
        infos: Dict[str, RuleInfo],
        linted: Callable[[OpenDocument], None],
        config_error: Callable[[ConfigError], None],
        failed: Callable[[str], None],
        project_running: Callable[[], Optional[Awaitable]] = lambda: None,
    ) -> None:
        self._executor = executor
        self._current = current
        self._encoding = encoding
        self._infos = infos
        self._linted = linted
        self._config_error = config_error
        self._failed = failed
        self._project_running = project_running
        self._settings = SettingsByDirectory()
        self._open: Dict[str, OpenDocument] = {}

    def __iter__(self) -> Iterator[OpenDocument]:
        return iter(list(self._open.values()))

    def get(self, uri: str) -> Optional[OpenDocument]:
        return self._open.get(uri)

    def open(self, uri: str, path: Path, display: str) -> OpenDocument:
        document = OpenDocument(uri, path, display)
        self._configure(document)
        self._open[uri] = document
        return document

    def close(self, uri: str) -> None:
        self._open.pop(uri, None)

    def reconfigure(self) -> None:
        """Read the config files again (one changed); every document is linted anew."""
        self._settings.forget()
        for document in self._open.values():
            self._configure(document)
            document.latest = document.good = document.settled = document.strings = None

    async def refresh(self, uri: str, complete: bool = False) -> Optional[OpenDocument]:
        """The document with its newest text linted (and reported to `linted`): its
        findings carried over from the version before where they are the same, unless
        `complete` (fixes and facts are wanted)."""
        document = self._open.get(uri)
        if document is None:
            return None
        async with document.lock:
            text, version = self._current(uri)
            latest = document.latest
            if document.settings is None or (
                latest and latest.version == version and latest.findings.text == text and (latest.complete or not complete)
            ):
                return document
            loop = asyncio.get_running_loop()
            try:
                linted = None if complete else await self._carried(document, text, version)
                if linted is None and not complete and latest is not None and latest.parses:
                    linted = await loop.run_in_executor(
                        self._executor, self._local, document, latest, text, version, self._encoding()
                    )
                    if linted is not None:
                        self._settle_later(document)
                if linted is None:
                    lint = loop.run_in_executor(self._executor, self._lint, document, text, version, self._encoding())
                    if document.latest is None and not complete:
                        await self._while_linting(document, text, version, lint)
                    linted = await lint
            except Exception as error:  # an engine bug: this version goes unreported, the server goes on
                self._failed(f"{document.display}: internal error: {describe(error)}")
                return document
            if self._open.get(uri) is document:
                document.record(linted, self._executor)
                self._linted(document)
        return document

    async def actionable(self, uri: str) -> Optional[OpenDocument]:
        """The document ready for code actions: complete if it has findings to act on."""
        document = await self.refresh(uri)
        if document is not None and document.latest is not None and not document.latest.complete:
            if document.latest.result.diagnostics:
                document = await self.refresh(uri, complete=True)
        return document

    async def _carried(self, document: OpenDocument, text: str, version: Optional[int]) -> Optional[Linted]:
        """This version's findings carried over from the latest one, if `reuse` shows them the same."""
        base = document.latest
        if base is None:
            return await self._cached(document, text, version)
        if not base.parses:
            return None
        before = base.findings.text
        changed = reuse.comment_rows_changed(before, text)
        if changed is None:
            return None
        if document.strings is None or not reuse.may_carry(
            before, text, changed, base.result.diagnostics, await document.strings
        ):
            return None
        return self._known(document, text, version, base.result.diagnostics, base.findings)

    async def _while_linting(self, document: OpenDocument, text: str, version: Optional[int], lint) -> None:
        """If the project pass under way caches the file's findings before `lint` is done
        (it began before the file was opened), show those at once."""
        running = self._project_running()
        if running is None:
            return
        await asyncio.wait({lint, asyncio.ensure_future(running)}, return_when=asyncio.FIRST_COMPLETED)
        if lint.done():
            return
        known = await self._cached(document, text, version)
        if known is not None and self._open.get(document.uri) is document:
            document.record(known, self._executor)
            self._linted(document)

    async def _cached(self, document: OpenDocument, text: str, version: Optional[int]) -> Optional[Linted]:
        """The findings `torchlint check` cached for this text of the file, if any."""
        loop = asyncio.get_running_loop()
        found = await loop.run_in_executor(  # not in the executor: a lint there may be long
            None, reuse.cached_findings, document.path, document.display, text, document.settings
        )
        return None if found is None else self._known(document, text, version, found)

    def _known(
        self, document: OpenDocument, text: str, version: Optional[int], diagnostics, before: Optional[Findings] = None
    ) -> Linted:
        """A version whose findings are known (without their fixes: see `reuse`); `before`,
        those shown in the version they were carried from, whose LSP positions hold here
        (no finding starts or ends on a row that changed)."""
        diagnostics = reuse.without_fixes(diagnostics)
        shown = self.not_baselined(diagnostics, document.display, text, document.settings.config)
        result = FileResult(document.display, diagnostics)
        if before is not None and shown == reuse.without_fixes(before.diagnostics):
            findings = Findings(text, tuple(shown), before.published)
        else:
            findings = findings_in(text, shown, self._encoding(), self._infos)
        return Linted(version, result, findings, complete=False)

    async def fixed(self, document: OpenDocument, text: str) -> str:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, fix_document, text, document.display, document.settings)

    def warm_up(self) -> None:
        """Import and exercise LibCST and the rules now, not on the first document opened."""
        settings = RunSettings(Config(), tuple(rule.code for rule in all_rules()))
        self._executor.submit(lint_document, WARM_UP, "warm_up.py", settings)

    def _configure(self, document: OpenDocument) -> None:
        try:
            document.settings = self._settings.get(document.path.parent)
        except ConfigError as error:
            document.settings = None
            self._config_error(error)

    def _local(self, document: OpenDocument, base: Linted, text: str, version: Optional[int], encoding: str):
        """This version's findings from a lint of the definitions edited since `base`
        (`local_edit`), or None where that does not apply. In the lint thread."""
        base_text = lintable(base.findings.text)
        before = document.outline
        if before is None or before.text != base_text:
            before = local_edit.outline(base_text)
        edit = None if before is None else local_edit.edited(before, lintable(text))
        document.outline = None if edit is None else edit.after
        if edit is None:
            return None
        settings = document.settings
        diagnostics = local_edit.local_findings(
            before, base.result.diagnostics, edit, document.display, settings.config,
            rules_for(document.display, settings),
        )
        if diagnostics is None:
            return None
        shown = self.not_baselined(diagnostics, document.display, text, settings.config)
        result = FileResult(document.display, diagnostics)
        findings = findings_in(text, shown, encoding, self._infos)
        return Linted(version, result, findings, complete=False, local=True, strings=edit.after.strings)

    def _settle_later(self, document: OpenDocument) -> None:
        """A complete lint of the document once typing pauses (each edit puts it off)."""
        if document.settle is None:
            uri = document.uri
            document.settle = Debounced(lambda: self._settle(uri), SETTLE_DELAY)
        document.settle.request()

    async def _settle(self, uri: str) -> None:
        document = self._open.get(uri)
        if document is not None and document.unsettled:
            await self.refresh(uri, complete=True)

    def _lint(self, document: OpenDocument, text: str, version: Optional[int], encoding: str) -> Linted:
        result = lint_document(text, document.display, document.settings, document.parser)
        shown = self.not_baselined(result.diagnostics, document.display, text, document.settings.config)
        return Linted(version, result, findings_in(text, shown, encoding, self._infos))

    def project_not_baselined(self, diagnostics, display: str, text: str) -> list:
        """`not_baselined` for the project pass's findings in a file, open or not."""
        try:
            config = self._settings.get(Path(display).absolute().parent).config
        except ConfigError:  # said when the file's documents were linted
            return list(diagnostics)
        return self.not_baselined(diagnostics, display, text, config)

    def not_baselined(self, diagnostics, display: str, text: str, config: Config) -> list:
        """What the project's configured baseline does not hold, as `torchlint check` shows;
        all of them (and a warning) if the baseline cannot be read."""
        try:
            return without_baselined(diagnostics, {display: text}, config)
        except BaselineError as error:
            self._config_error(error)
            return list(diagnostics)
