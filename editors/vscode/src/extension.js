'use strict';
// A thin client of `torchlint server`: the server lints, fixes and offers the code
// actions; this file only picks the process to run and restarts it when that changes.

const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');
const { serverCommand } = require('./server-command');

const FIX_ALL = vscode.CodeActionKind.SourceFixAll.append('torchlint');

let client;
let output;
let restarting = Promise.resolve();

async function activate(context) {
  output = vscode.window.createOutputChannel('torchlint');
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('torchlint.restart', restart),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration('torchlint')) {
        restart();
      }
    }),
  );
  const python = await pythonApi();
  if (python) {
    context.subscriptions.push(python.environments.onDidChangeActiveEnvironmentPath(restart));
  }
  await restart();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

function restart() {
  restarting = restarting.then(start, start);
  return restarting;
}

async function start() {
  if (client) {
    await client.stop().catch(() => undefined);
    client = undefined;
  }
  const folder = vscode.workspace.workspaceFolders?.[0];
  const settings = vscode.workspace.getConfiguration('torchlint', folder);
  const server = serverCommand({
    path: settings.get('path'),
    interpreter: settings.get('interpreter'),
    args: settings.get('args'),
    selectedPython: await selectedPython(folder),
  });
  output.appendLine(`torchlint: starting ${[server.command, ...server.args].join(' ')}`);
  client = new LanguageClient(
    'torchlint',
    'torchlint',
    { ...server, options: { cwd: folder?.uri.fsPath } },
    {
      documentSelector: [{ scheme: 'file', language: 'python' }],
      outputChannel: output,
      middleware: { provideCodeActions: withoutFixAllUnlessWanted },
    },
  );
  try {
    await client.start();
  } catch (error) {
    vscode.window.showErrorMessage(
      `torchlint server did not start (${server.command}): ${error.message || error}. ` +
        'Install torchlint with its `server` extra in that environment, or set torchlint.path.',
    );
  }
}

/** `torchlint.fixAll` off: the server's "Fix all torchlint" action is not offered. */
async function withoutFixAllUnlessWanted(document, range, context, token, next) {
  const actions = await next(document, range, context, token);
  if (!actions || vscode.workspace.getConfiguration('torchlint', document).get('fixAll')) {
    return actions;
  }
  return actions.filter((action) => !(action.kind && FIX_ALL.contains(action.kind)));
}

/** The Python extension's API (`environments`), if it is installed. */
async function pythonApi() {
  const extension = vscode.extensions.getExtension('ms-python.python');
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api?.environments ? api : undefined;
  } catch (error) {
    output.appendLine(`torchlint: the Python extension did not activate: ${error}`);
    return undefined;
  }
}

/** The interpreter the Python extension has selected for `folder`, if any. */
async function selectedPython(folder) {
  const api = await pythonApi();
  if (!api) {
    return '';
  }
  const environment = await api.environments.resolveEnvironment(
    api.environments.getActiveEnvironmentPath(folder?.uri),
  );
  return environment?.executable?.uri?.fsPath || '';
}

module.exports = { activate, deactivate };
