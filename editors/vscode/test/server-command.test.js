'use strict';
const assert = require('node:assert');
const test = require('node:test');
const { serverCommand } = require('../src/server-command');

test('torchlint.path runs that executable', () => {
  assert.deepStrictEqual(serverCommand({ path: '/venv/bin/torchlint', args: ['-v'], selectedPython: '/py' }), {
    command: '/venv/bin/torchlint',
    args: ['server', '-v'],
  });
});

test('torchlint.interpreter, then the Python extension, then python3', () => {
  const moduleArgs = ['-m', 'torchlint', 'server'];
  assert.deepStrictEqual(serverCommand({ interpreter: '/a/python', selectedPython: '/b/python' }), {
    command: '/a/python',
    args: moduleArgs,
  });
  assert.deepStrictEqual(serverCommand({ selectedPython: '/b/python' }), { command: '/b/python', args: moduleArgs });
  assert.deepStrictEqual(serverCommand({}), { command: 'python3', args: moduleArgs });
});
