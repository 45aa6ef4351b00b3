'use strict';
// src/extension.js with stand-ins for `vscode` and the language client (no npm install,
// no VS Code): which server it starts from the Python extension's interpreter and the
// settings, that picking another interpreter restarts it, and that `torchlint.fixAll`
// off hides "Fix all torchlint".

const assert = require('node:assert');
const Module = require('node:module');
const path = require('node:path');
const test = require('node:test');

function fakes({ settings = {}, python } = {}) {
  const world = { started: [], stopped: 0, listeners: {}, shown: [] };
  class CodeActionKind {
    constructor(value) {
      this.value = value;
    }
    append(part) {
      return new CodeActionKind(`${this.value}.${part}`);
    }
    contains(other) {
      return other.value === this.value || other.value.startsWith(`${this.value}.`);
    }
  }
  CodeActionKind.SourceFixAll = new CodeActionKind('source.fixAll');
  CodeActionKind.QuickFix = new CodeActionKind('quickfix');
  world.CodeActionKind = CodeActionKind;
  const disposable = { dispose() {} };
  world.vscode = {
    CodeActionKind,
    window: {
      createOutputChannel: () => ({ appendLine() {}, dispose() {} }),
      showErrorMessage: (message) => world.shown.push(message),
    },
    commands: { registerCommand: () => disposable },
    workspace: {
      workspaceFolders: [{ uri: { fsPath: '/project' } }],
      getConfiguration: () => ({ get: (key) => settings[key] }),
      onDidChangeConfiguration: (listener) => {
        world.listeners.configuration = listener;
        return disposable;
      },
    },
    extensions: {
      getExtension: (id) =>
        id === 'ms-python.python' && python
          ? {
              isActive: true,
              exports: {
                environments: {
                  getActiveEnvironmentPath: () => ({ path: python.current }),
                  resolveEnvironment: async (environment) => ({
                    executable: { uri: { fsPath: `${environment.path}/bin/python` } },
                  }),
                  onDidChangeActiveEnvironmentPath: (listener) => {
                    world.listeners.python = listener;
                    return disposable;
                  },
                },
              },
            }
          : undefined,
    },
  };
  world.client = {
    LanguageClient: class {
      constructor(id, name, server, options) {
        this.server = server;
        this.options = options;
        world.started.push(this);
      }
      async start() {}
      async stop() {
        world.stopped += 1;
      }
    },
  };
  return world;
}

/** A fresh copy of the extension that requires the fakes of `world`. */
function load(world) {
  const entry = path.join(__dirname, '..', 'src', 'extension.js');
  const original = Module._load;
  Module._load = function (request, parent, isMain) {
    if (request === 'vscode') return world.vscode;
    if (request === 'vscode-languageclient/node') return world.client;
    return original.call(this, request, parent, isMain);
  };
  try {
    delete require.cache[entry];
    return require(entry);
  } finally {
    Module._load = original;
  }
}

const context = () => ({ subscriptions: [] });

test("the Python extension's interpreter runs the server, and a new one restarts it", async () => {
  const python = { current: '/envs/a' };
  const world = fakes({ settings: { args: [] }, python });
  await load(world).activate(context());
  assert.deepStrictEqual(world.started[0].server.command, '/envs/a/bin/python');
  assert.deepStrictEqual(world.started[0].server.args, ['-m', 'torchlint', 'server']);
  assert.deepStrictEqual(world.started[0].options.documentSelector, [{ scheme: 'file', language: 'python' }]);

  python.current = '/envs/b';
  await world.listeners.python();
  assert.strictEqual(world.stopped, 1);
  assert.strictEqual(world.started[1].server.command, '/envs/b/bin/python');
});

test('without the Python extension: torchlint.interpreter, else python3; torchlint.path wins', async () => {
  let world = fakes({ settings: { interpreter: '/venv/bin/python', args: ['--x'] } });
  await load(world).activate(context());
  assert.deepStrictEqual(world.started[0].server, {
    command: '/venv/bin/python',
    args: ['-m', 'torchlint', 'server', '--x'],
    options: { cwd: '/project' },
  });

  world = fakes({ settings: { args: [] } });
  await load(world).activate(context());
  assert.strictEqual(world.started[0].server.command, 'python3');

  world = fakes({ settings: { path: '/bin/torchlint', args: [] }, python: { current: '/envs/a' } });
  await load(world).activate(context());
  assert.deepStrictEqual(world.started[0].server.command, '/bin/torchlint');
  assert.deepStrictEqual(world.started[0].server.args, ['server']);
});

test('torchlint.fixAll off hides "Fix all torchlint", not the quick fixes', async () => {
  const settings = { args: [], fixAll: true };
  const world = fakes({ settings });
  await load(world).activate(context());
  const { CodeActionKind } = world;
  const offered = [
    { title: 'TL001: move it', kind: CodeActionKind.QuickFix },
    { title: 'Fix all torchlint', kind: CodeActionKind.SourceFixAll.append('torchlint') },
  ];
  const provide = world.started[0].options.middleware.provideCodeActions;
  const next = async () => offered;
  assert.strictEqual((await provide({}, {}, {}, {}, next)).length, 2);
  settings.fixAll = false;
  assert.deepStrictEqual(
    (await provide({}, {}, {}, {}, next)).map((action) => action.title),
    ['TL001: move it'],
  );
});

test('a server that does not start is reported with what to install', async () => {
  const world = fakes({ settings: { args: [] } });
  world.client.LanguageClient.prototype.start = async () => {
    throw new Error('spawn python3 ENOENT');
  };
  await load(world).activate(context());
  assert.match(world.shown[0], /spawn python3 ENOENT.*`server` extra/);
});
