"""Project-level findings (TL004, TL001's import graph) over the workspace, in the background.

A pass is `torchlint check ROOT`'s per-file pass (cached, in parallel) and project pass,
with the open documents' facts taken from their unsaved text. It runs in a child process,
so an edit never waits for it, not even for the GIL; passes are debounced and one at a time.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

from torchlint.core.config_files import ConfigError
from torchlint.run.discovery import discover
from torchlint.engine import describe
from torchlint.core.diagnostics import Diagnostic
from torchlint.core.interrupts import Terminated, raise_on_sigterm
from torchlint.rule_api.registry import all_rules
from torchlint.index.record_text import RecordText
from torchlint.run.jobs import FileOutcome
from torchlint.run.pool import default_jobs
from torchlint.run.project import project_pass
from torchlint.run.runner import lint_files
from torchlint.integrations.server.settings import settings_for


@dataclass(frozen=True)
class ProjectRequest:
    cwd: str
    roots: Tuple[str, ...]  # the workspace folders, named as the documents' displays are
    open_facts: Dict[str, Any]  # display -> the record (FileRecord) of an open document's text


@dataclass
class ProjectAnswer:
    findings: Dict[str, List[Diagnostic]] = field(default_factory=dict)  # display -> findings
    errors: List[str] = field(default_factory=list)


def project_findings(request: ProjectRequest) -> ProjectAnswer:
    """The project-level findings of every root, by file."""
    os.chdir(request.cwd)
    answer = ProjectAnswer()
    for root in request.roots:
        try:
            settings = settings_for(Path(root))
        except ConfigError as error:
            answer.errors.append(str(error))
            continue
        if not any(rule.project_rule and rule.code in settings.codes for rule in all_rules()):
            continue
        files = discover([root], settings.config)
        on_disk = [(display, path, None) for display, path in files if display not in request.open_facts]
        outcomes = lint_files(on_disk, settings, workers=max(1, default_jobs() - 1))
        outcomes += [
            FileOutcome(display, record=RecordText.of(request.open_facts[display]))
            for display, _ in files
            if display in request.open_facts
        ]
        answer.errors.extend(error for outcome in outcomes for error in outcome.errors)
        for diagnostic in project_pass(outcomes, settings):
            answer.findings.setdefault(diagnostic.filename, []).append(diagnostic)
    return answer


def _serve(connection) -> None:
    """The child's loop: a request in, its answer out, until the parent goes. ^C (sent to
    the whole process group) is the parent's to handle; SIGTERM, the parent stopping
    it, unwinds a pass (its own workers stopped); a parent gone is no error."""
    os.dup2(2, 1)  # fd 1 is the parent's stdout, the LSP stream: nothing may write there
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise_on_sigterm()
    try:
        while True:
            request = connection.recv()
            try:
                answer = project_findings(request)
            except Exception as error:  # a bug here must not end the server's project findings
                answer = ProjectAnswer(errors=[f"project pass: internal error: {describe(error)}"])
            connection.send(answer)
    except (EOFError, OSError, Terminated):
        return


class ProjectWorker:
    """The child process that runs passes: started on first use, again if it died; once
    closed (the server is shutting down), it answers nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # `ask` runs in a thread, `close` in the event loop
        self._process = None
        self._connection = None
        self._closed = False

    def ask(self, request: ProjectRequest) -> ProjectAnswer:
        """Blocks until the pass is done: call it from a thread."""
        with self._lock:
            if self._closed:
                return ProjectAnswer()
            if self._process is None or not self._process.is_alive():
                self._start()
            connection = self._connection
        try:
            connection.send(request)
            return connection.recv()
        except (EOFError, OSError) as error:
            with self._lock:
                if self._closed:
                    return ProjectAnswer()
                self._stop()
            return ProjectAnswer(errors=[f"project pass: the worker process stopped: {describe(error)}"])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._stop()

    def _stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.join(5)
            self._connection.close()
        self._process = self._connection = None

    def _start(self) -> None:
        context = multiprocessing.get_context("spawn")  # the server has threads: no fork
        self._connection, theirs = context.Pipe()
        self._process = context.Process(target=_serve, args=(theirs,), daemon=True, name="torchlint-project-pass")
        self._process.start()
        theirs.close()


class Debounced:
    """Runs `job` `delay` seconds after the latest `request`, never twice at once: a
    request during a run is served by another run right after it."""

    def __init__(self, job: Callable[[], Awaitable[None]], delay: float) -> None:
        self._job = job
        self._delay = delay
        self._wanted = False
        self._timer: Optional[asyncio.TimerHandle] = None
        self._running: Optional[asyncio.Task] = None

    def request(self, delay: Optional[float] = None) -> None:
        self._wanted = True
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self._delay if delay is None else delay, self._start)

    def _start(self) -> None:
        self._timer = None
        if self._running is None or self._running.done():
            self._running = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while self._wanted:
            self._wanted = False
            await self._job()

    def running(self) -> Optional[asyncio.Task]:
        """The run under way, if any."""
        return self._running if self._running is not None and not self._running.done() else None

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self._running is not None:
            self._running.cancel()
