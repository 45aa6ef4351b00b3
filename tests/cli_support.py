from __future__ import annotations

import os
import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "fixtures"
# TL001 reports a module-level heavy import only when a function reads it later (an unread
# import is flake8's F401): append WANDB_READ_LATER to a source that ends with `import wandb`.
WANDB_READ_LATER = "\n\ndef f():\n    return wandb\n"
WANDB_USED = "import wandb\n" + WANDB_READ_LATER


# the entry points `python -m MODULE` runs: module -> the module path of its `main`
ENTRY_POINTS = {
    "torchlint": "torchlint.cli",
    "torchlint.doctor": "torchlint.doctor.cli",
    "torchlint.explain": "torchlint.explain.cli",
    "torchlint.report.rule_pages": "torchlint.report.rule_pages",
}


def run_torchlint(*args, cwd=None, input=None, env=None, prefix=()):
    """The real console entry point, `torchlint.cli.main`, with its own working directory,
    environment, stdin and captured stdout/stderr bytes, as a CompletedProcess.

    In this process (a new interpreter costs 0.25 s a call), unless a child process is
    the point: `prefix` (e.g. setpriv), an `env` that only a starting interpreter reads
    (PYTHONPATH and the like), or TORCHLINT_TESTS_SUBPROCESS=1 for every call (to check
    that the two agree)."""
    return run_module("torchlint", *args, cwd=cwd, input=input, env=env, prefix=prefix)


def run_module(module, *args, cwd=None, input=None, env=None, prefix=()):
    """`python -m MODULE ARGS` for a module of ENTRY_POINTS, as run_torchlint runs it: its
    `main` in this process unless a child process is the point. In `env`, None unsets."""
    at_startup = any(name.startswith("PYTHON") for name in (env or {}))
    if prefix or at_startup or os.environ.get("TORCHLINT_TESTS_SUBPROCESS") == "1":
        return run_torchlint_process(*args, cwd=cwd, input=input, env=env, prefix=prefix, module=module)
    return _in_process(module, list(args), cwd, input, env)


def as_text(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    """`result` with its stdout and stderr decoded, as `subprocess.run(..., text=True)` gives."""
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(), result.stderr.decode())


def run_torchlint_process(*args, cwd=None, input=None, env=None, prefix=(), module="torchlint", timeout=300):
    """`python -m torchlint ARGS` (or another MODULE) in a child process (run under
    `prefix`, if given), killed after `timeout` seconds. In `env`, None unsets."""
    full_env = {**os.environ, "NO_COLOR": "1", "FORCE_COLOR": None, **(env or {})}
    return subprocess.run(
        [*prefix, sys.executable, "-m", module, *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        env={name: value for name, value in full_env.items() if value is not None},
        timeout=timeout,
    )


def _in_process(module, args, cwd, input, env):
    import importlib
    import importlib.util
    import io
    import traceback

    main = importlib.import_module(ENTRY_POINTS[module]).main
    spec = importlib.util.find_spec(module)
    # what `python -m MODULE` puts in sys.argv[0]: a package's __main__.py, or the module's file
    script = str(Path(spec.origin).with_name("__main__.py")) if spec.submodule_search_locations else spec.origin

    import signal

    saved = (os.environ.copy(), os.getcwd(), sys.stdin, sys.stdout, sys.stderr, sys.argv)
    # what a run may change of the process's signal state, put back as a child's exit would
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, ())
    out, err = io.BytesIO(), io.BytesIO()
    # as the streams of a child process on a pipe: UTF-8, stderr with backslashreplace
    stdout = io.TextIOWrapper(out, encoding="utf-8", newline="\n", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", errors="backslashreplace", newline="\n", write_through=True)
    try:
        for name, value in {"NO_COLOR": "1", "FORCE_COLOR": None, **(env or {})}.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = io.TextIOWrapper(io.BytesIO(input or b""), encoding="utf-8")
        sys.stdout, sys.stderr, sys.argv = stdout, stderr, [script, *args]
        try:
            code = main(args)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
            if isinstance(stop.code, str):
                print(stop.code, file=stderr)
        except Exception:
            traceback.print_exc(file=stderr)
            code = 1
        for stream in (stdout, stderr):
            stream.flush()
    finally:
        environ, directory, sys.stdin, sys.stdout, sys.stderr, sys.argv = saved
        for number, handler in handlers.items():
            signal.signal(number, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.chdir(directory)
        os.environ.clear()
        os.environ.update(environ)
    return subprocess.CompletedProcess(["torchlint", *args], code, out.getvalue(), err.getvalue())


def write_tree(root: Path, files: dict) -> Path:
    """Write `{relative name: text}` under `root` (folders made as needed); return `root`."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def messages_by_code_and_row(tmp_path: Path, capsys, files: dict, select: str) -> dict:
    """Lint `files` (`{relative name: text}`, each dedented) under `tmp_path` with the real CLI, in
    process, selecting `select`: `{(code, row): message}` of what it reports."""
    from torchlint import cli

    root = write_tree(tmp_path, {name: textwrap.dedent(text) for name, text in files.items()})
    capsys.readouterr()
    cli.main(["check", "--no-cache", "--select", select, "--output-format", "json", str(root)])
    found = json.loads(capsys.readouterr().out)
    return {(item["code"], item["location"]["row"]): item["message"] for item in found}


MARKER = re.compile(r"#\s*expect:\s*(?P<items>TL\d{3}:\d+(?:\s*,\s*TL\d{3}:\d+)*)")


def expected_findings(project: Path) -> set:
    """The (file, row, column, code) findings that the `# expect: CODE:COL` markers under
    `project` name; in a notebook the file is `name.ipynb:cell N` and rows count in the cell."""
    expected = set()
    sources = [(path.relative_to(project).as_posix(), path.read_text(encoding="utf-8")) for path in sorted(project.rglob("*.py"))]
    for path in sorted(project.rglob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells, start=1):
            if cell["cell_type"] == "code":
                sources.append((f"{path.relative_to(project).as_posix()}:cell {number}", "".join(cell["source"])))
    for name, text in sources:
        for row, line in enumerate(text.splitlines(), start=1):
            match = MARKER.search(line)
            if match:
                for item in match.group("items").split(","):
                    code, column = item.strip().split(":")
                    expected.add((name, row, int(column), code))
    return expected
