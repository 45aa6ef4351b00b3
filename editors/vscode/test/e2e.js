'use strict';
// End to end in a real VS Code: the .vsix installed into code-server, code-server driven
// by a headless Chromium (playwright-core). A workspace holds `import wandb` used only in
// a function (TL001, with a safe fix); the test waits for the diagnostic, applies the
// quick fix through the editor's Quick Fix menu, saves a second file with
// `source.fixAll.torchlint` on save, then a third with `torchlint.fixAll` off, and checks
// the texts each time.
//
//   node test/e2e.js --vsix torchlint-0.1.0.vsix --code-server PATH --chromium PATH \
//     --python PATH [--screenshots DIR]
//
// --python must have torchlint installed with its `server` extra. Exit 0: all passed.

const assert = require('node:assert');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');

const HEAVY_IMPORT = 'import wandb\n\n\ndef log(metrics):\n    wandb.log(metrics)\n';
const LAZY_IMPORT = 'def log(metrics):\n    import wandb\n\n    wandb.log(metrics)\n';
const STEP = 60_000;

function options() {
  const args = process.argv.slice(2);
  const value = (name) => {
    const at = args.indexOf(`--${name}`);
    return at >= 0 ? args[at + 1] : undefined;
  };
  const chosen = {
    vsix: value('vsix'),
    codeServer: value('code-server'),
    chromium: value('chromium'),
    python: value('python'),
    screenshots: value('screenshots') || process.cwd(),
  };
  for (const [name, given] of Object.entries(chosen)) {
    if (!given) {
      throw new Error(`missing --${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
    }
  }
  return chosen;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function writeJson(file, data) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(data, null, 2));
}

function workspaceSettings(opts, fixAll) {
  return {
    'torchlint.interpreter': opts.python,
    'torchlint.fixAll': fixAll,
    '[python]': { 'editor.codeActionsOnSave': { 'source.fixAll.torchlint': 'explicit' } },
  };
}

/** Edit `name` and save it; its text on disk once the save is done. */
async function editAndSave(page, file) {
  await page.keyboard.press('Control+End');
  await page.keyboard.type('# saved\n');
  await page.keyboard.press('Control+S');
  const deadline = Date.now() + STEP;
  while (fs.readFileSync(file, 'utf8') === HEAVY_IMPORT && Date.now() < deadline) {
    await page.waitForTimeout(250);
  }
  return fs.readFileSync(file, 'utf8');
}

/** A workspace, and code-server's profile with the extension installed. */
function prepare(opts, root) {
  const workspace = path.join(root, 'project');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'train.py'), HEAVY_IMPORT);
  fs.writeFileSync(path.join(workspace, 'on_save.py'), HEAVY_IMPORT);
  fs.writeFileSync(path.join(workspace, 'fix_all_off.py'), HEAVY_IMPORT);
  writeJson(path.join(workspace, '.vscode', 'settings.json'), workspaceSettings(opts, true));
  const profile = { extensions: path.join(root, 'extensions'), data: path.join(root, 'data') };
  writeJson(path.join(profile.data, 'User', 'settings.json'), {
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    'security.workspace.trust.enabled': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.ignoreRecommendations': true,
    'editor.lightbulb.enabled': 'on',
  });
  const install = spawnSync(
    opts.codeServer,
    ['--extensions-dir', profile.extensions, '--user-data-dir', profile.data, '--install-extension', opts.vsix],
    { encoding: 'utf8', timeout: STEP * 2 },
  );
  console.log(`code-server --install-extension: exit ${install.status}\n${install.stdout}${install.stderr}`);
  assert.strictEqual(install.status, 0, 'the .vsix did not install');
  return { workspace, profile };
}

function startCodeServer(opts, profile, workspace, port) {
  const child = spawn(
    opts.codeServer,
    [
      '--auth', 'none',
      '--bind-addr', `127.0.0.1:${port}`,
      '--extensions-dir', profile.extensions,
      '--user-data-dir', profile.data,
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      workspace,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  let log = '';
  const listening = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start:\n${log}`)), STEP);
    const read = (chunk) => {
      log += chunk;
      if (log.includes('HTTP server listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`code-server exited (${code}):\n${log}`)));
  });
  return { child, listening, log: () => log };
}

/** The editor's text as shown (VS Code renders spaces as no-break spaces). */
async function editorText(page) {
  const lines = await page.locator('.monaco-editor .view-lines .view-line').evaluateAll((nodes) =>
    nodes
      .map((node) => ({ top: parseFloat(node.style.top), text: node.textContent }))
      .sort((a, b) => a.top - b.top)
      .map((line) => line.text),
  );
  return lines.join('\n').replace(/\u00a0/g, ' ');
}

async function openFile(page, name) {
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').fill(name);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first().click({ timeout: STEP });
  await page.locator(`.tab.active:has-text("${name}")`).waitFor({ timeout: STEP });
  await page.locator('.monaco-editor .view-lines').first().click();
}

async function waitForFinding(page, file) {
  await page.locator('.markers-panel').getByText('TL001', { exact: false }).first().waitFor({ timeout: STEP });
  await page.locator('.monaco-editor .squiggly-error, .monaco-editor .squiggly-warning').first().waitFor({ timeout: STEP });
  console.log(`${file}: TL001 shown in the editor and in Problems`);
}

async function main() {
  const opts = options();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'torchlint-vscode-e2e-'));
  const { workspace, profile } = prepare(opts, root);
  const port = await freePort();
  const server = startCodeServer(opts, profile, workspace, port);
  let browser;
  let page;
  const shot = async (name) => {
    const file = path.join(opts.screenshots, `vscode-${name}.png`);
    await page.screenshot({ path: file });
    console.log(`screenshot: ${file}`);
  };
  try {
    await server.listening;
    browser = await chromium.launch({ executablePath: opts.chromium, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 800 } });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor({ timeout: STEP });

    // the diagnostic
    await openFile(page, 'train.py');
    await page.keyboard.press('Control+Shift+M'); // Problems
    await waitForFinding(page, 'train.py');
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I'); // the hover, with the finding's message
    await page.waitForTimeout(1500);
    await shot('diagnostic');

    // the quick fix, from the Quick Fix menu
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+.');
    const fix = page.locator('.action-widget .monaco-list-row', { hasText: 'TL001:' }).first();
    await fix.waitFor({ timeout: STEP });
    await shot('quick-fix-menu');
    // the menu catches the mouse behind a pointer block: choose with the keyboard
    const focused = page.locator('.action-widget .monaco-list-row.focused');
    for (let step = 0; step < 10 && !(await focused.textContent()).includes('TL001:'); step++) {
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => !document.querySelector('.monaco-editor .view-lines').textContent.startsWith('import wandb'), null, { timeout: STEP });
    assert.strictEqual(await editorText(page), LAZY_IMPORT.replace(/\n$/, '\n'));
    await page.locator('.markers-panel').getByText('TL001').waitFor({ state: 'detached', timeout: STEP });
    console.log('train.py: the quick fix moved the import into the function; TL001 is gone');
    await shot('quick-fix-applied');

    // fix all on save (editor.codeActionsOnSave: source.fixAll.torchlint)
    await openFile(page, 'on_save.py');
    await waitForFinding(page, 'on_save.py');
    assert.strictEqual(await editAndSave(page, path.join(workspace, 'on_save.py')), `${LAZY_IMPORT}# saved\n`);
    console.log('on_save.py: saving applied "Fix all torchlint"');
    await shot('fix-all-on-save');

    // torchlint.fixAll off (the client restarts with the setting): saving leaves the import
    writeJson(path.join(workspace, '.vscode', 'settings.json'), workspaceSettings(opts, false));
    await page.waitForTimeout(3000);
    await openFile(page, 'fix_all_off.py');
    await waitForFinding(page, 'fix_all_off.py');
    assert.strictEqual(await editAndSave(page, path.join(workspace, 'fix_all_off.py')), `${HEAVY_IMPORT}# saved\n`);
    await page.locator('.markers-panel').getByText('TL001').first().waitFor({ timeout: STEP });
    console.log('fix_all_off.py: with torchlint.fixAll off, saving kept the import (TL001 still shown)');
    console.log('e2e: passed');
  } catch (error) {
    if (page) {
      await shot('failure').catch(() => undefined);
    }
    console.error(`code-server log:\n${server.log()}`);
    throw error;
  } finally {
    if (browser) {
      await browser.close();
    }
    try {
      process.kill(-server.child.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
