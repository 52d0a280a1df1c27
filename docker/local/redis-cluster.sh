#!/usr/bin/env bash
# A throwaway three-master Redis Cluster on loopback, for tests of the hash-tag layout on Cluster.
#
#   redis-cluster.sh up   <dir> <port1> <port2> <port3>   start, create the cluster, wait for cluster_state:ok
#   redis-cluster.sh down <dir>                           stop what `up` started there, by recorded pid
#
# Data, configs, logs and pids live in <dir> (one sub-folder per port). Nothing is persisted: every
# `up` that has to start a node starts it empty, so `--cluster create` always sees fresh nodes.
set -euo pipefail

now_ms() { date +%s%3N; }
say() { echo "[redis-cluster] $*"; }
fail() {
  echo "[redis-cluster] ERROR: $*" >&2
  exit 1
}
since() { echo $(($(now_ms) - $1)); }

alive() {
  local state
  state="$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# The recorded pid, when it is still a redis-server we started (pids are reused).
our_pid() {
  local file="$1" pid
  [ -f "$file" ] || return 1
  pid="$(cat "$file" 2>/dev/null || true)"
  if [[ "$pid" =~ ^[0-9]+$ ]] && alive "$pid" &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- redis-server; then
    echo "$pid"
    return 0
  fi
  rm -f "$file"
  return 1
}

cli() { timeout 5 redis-cli -h 127.0.0.1 -p "$1" "${@:2}"; }

cluster_ok() { cli "$1" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; }

start_node() {
  local dir="$1" port="$2" node="$1/$2" pid
  if pid="$(our_pid "$dir/$port.pid")"; then
    say "node $port: already running (ours, pid $pid)"
    return 0
  fi
  if cli "$port" ping >/dev/null 2>&1; then
    fail "port $port already answers PING and is not ours; pick other ports"
  fi
  rm -rf "$node"
  mkdir -p "$node"
  cat >"$node/redis.conf" <<EOF
bind 127.0.0.1
port $port
protected-mode yes
daemonize no
dir $node
logfile $node/redis.log
cluster-enabled yes
cluster-config-file $node/nodes.conf
cluster-node-timeout 5000
save ""
appendonly no
EOF
  # Own session so the node outlives the caller's process group; `exec` keeps the recorded pid.
  # shellcheck disable=SC2016
  setsid bash -c 'echo $$ >"$0" && exec redis-server "$1"' "$dir/$port.pid" "$node/redis.conf" \
    </dev/null >>"$node/redis.out" 2>&1 &
  local deadline=$(($(now_ms) + 15000))
  until cli "$port" ping 2>/dev/null | grep -q PONG; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "node $port: no PONG within 15 s (log: $node/redis.log)"
    sleep 0.05
  done
  say "node $port: started pid $(cat "$dir/$port.pid")"
}

cmd_up() {
  [ $# -eq 4 ] || fail "usage: redis-cluster.sh up <dir> <port1> <port2> <port3>"
  local dir="$1" t0 port
  shift
  if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
    fail "redis-server/redis-cli missing: \`npm run stack:up\` installs them"
  fi
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  t0=$(now_ms)
  for port in "$@"; do start_node "$dir" "$port"; done
  if cluster_ok "$1"; then
    say "cluster already ok on $*"
    return 0
  fi
  local nodes=()
  for port in "$@"; do nodes+=("127.0.0.1:$port"); done
  if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas 0 --cluster-yes >"$dir/create.log" 2>&1; then
    tail -n 20 "$dir/create.log" >&2
    fail "redis-cli --cluster create failed (log: $dir/create.log)"
  fi
  local deadline=$(($(now_ms) + 30000))
  for port in "$@"; do
    until cluster_ok "$port"; do
      [ "$(now_ms)" -lt "$deadline" ] || fail "node $port: cluster_state not ok within 30 s"
      sleep 0.1
    done
  done
  say "cluster ok on $* in $(since "$t0") ms: REDIS_URL=redis+cluster://$(
    IFS=,
    echo "${nodes[*]}"
  )"
}

cmd_down() {
  [ $# -ge 1 ] || fail "usage: redis-cluster.sh down <dir>"
  local dir="$1" file pid deadline
  [ -d "$dir" ] || {
    say "nothing in $dir"
    return 0
  }
  for file in "$dir"/*.pid; do
    [ -e "$file" ] || continue
    if ! pid="$(our_pid "$file")"; then continue; fi
    kill -TERM "$pid" 2>/dev/null || true
    deadline=$(($(now_ms) + 30000))
    while alive "$pid" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
    if alive "$pid"; then kill -KILL "$pid" 2>/dev/null || true; fi
    rm -f "$file"
    say "node $(basename "$file" .pid): stopped pid $pid"
  done
}

case "${1:-}" in
  up) cmd_up "${@:2}" ;;
  down) cmd_down "${@:2}" ;;
  *)
    sed -n '2,5p' "$0"
    exit 2
    ;;
esac
