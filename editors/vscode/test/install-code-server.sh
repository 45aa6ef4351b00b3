#!/bin/sh
# Install code-server 4.100.3 (VS Code 1.100.3, the last on Node 20) from npm into $1
# (default /opt/tl-e2e) where only the npm registry and Debian are reachable: its
# postinstall would fetch ripgrep from GitHub, so ripgrep comes from Debian and the
# postinstall's steps run here instead. Needs root (apt) and Node 20.
set -eu
prefix="${1:-/opt/tl-e2e}"
apt-get install -y -qq chromium ripgrep libkrb5-dev g++ make python3 >/dev/null
mkdir -p "$prefix"
npm install --no-audit --no-fund --ignore-scripts --prefix "$prefix" code-server@4.100.3
(cd "$prefix" && npm_config_yes=true npm rebuild argon2)
cd "$prefix/node_modules/code-server/lib/vscode"
npm install --omit=dev --ignore-scripts --no-audit --no-fund
mkdir -p node_modules/@vscode/ripgrep/bin
cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg  # its postinstall skips an existing bin/
npm_config_yes=true npm rebuild  # the native modules (node-pty, spdlog, kerberos, ...)
rm -rf node_modules.asar && ln -s node_modules node_modules.asar
(cd bin/remote-cli && ln -sf code-linux.sh code-server)
(cd bin/helpers && ln -sf browser-linux.sh browser.sh)
(cd extensions && npm install --omit=dev --no-audit --no-fund)
"$prefix/node_modules/.bin/code-server" --version
