'use strict';
// Which process runs the server; no `vscode` import, so Node tests it alone.

/**
 * The command that starts the server for these settings:
 * `torchlint.path` as `PATH server ARGS`, else `PYTHON -m torchlint server ARGS` with
 * the first of `torchlint.interpreter`, the Python extension's interpreter, `python3`
 * (an interpreter set for torchlint wins over the one picked for the workspace, as
 * ruff's `ruff.interpreter` does).
 */
function serverCommand({ path = '', interpreter = '', args = [], selectedPython = '' }) {
  if (path) {
    return { command: path, args: ['server', ...args] };
  }
  const python = interpreter || selectedPython || 'python3';
  return { command: python, args: ['-m', 'torchlint', 'server', ...args] };
}

module.exports = { serverCommand };
