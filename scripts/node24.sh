#!/bin/sh
# Runs "$@" with Node.js >= 22 first on the PATH. When the machine's Node is older, Node 24
# is fetched once from the npm registry (package node@24) into .tools/ and used from there.
set -e
root=$(cd "$(dirname "$0")/.." && pwd)
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$major" -lt 22 ]; then
  tools="$root/.tools/node24"
  if [ ! -x "$tools/node_modules/.bin/node" ]; then
    echo "node24.sh: Node $major is older than 22; fetching node@24 from the npm registry into .tools/" >&2
    mkdir -p "$tools"
    printf '{"private":true,"allowScripts":{"node":true}}\n' >"$tools/package.json"
    (cd "$tools" && npm install --no-save --no-package-lock --no-audit --no-fund --loglevel=error node@24 >&2)
  fi
  PATH="$tools/node_modules/.bin:$PATH"
  export PATH
fi
exec "$@"
