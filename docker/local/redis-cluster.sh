#!/usr/bin/env bash
# A throwaway Redis Cluster on loopback: three masters (default), or three masters with one replica
# each (REDIS_CLUSTER_REPLICAS=1, six ports), for tests of the hash-tag layout and of failover.
#
#   redis-cluster.sh up    <dir> <port1> … <port3|port6>  start, create the cluster, wait for cluster_state:ok
#                                                         (and, with replicas, for every replica in sync)
#   redis-cluster.sh down  <dir>                          stop what `up` started there, by recorded pid
#   redis-cluster.sh kill  <dir> <port>                   SIGKILL one node by its recorded pid (a crash)
#   redis-cluster.sh start <dir> <port>                   restart a killed node with its nodes.conf; it
#                                                         rejoins and the script waits until it is a
#                                                         replica in sync (master_link_status:up)
#
# Settings (environment):
#   REDIS_CLUSTER_REPLICAS=0|1          replicas per master (0: 3 ports; 1: 6 ports, 3 masters + 3 replicas)
#   REDIS_CLUSTER_NODE_TIMEOUT_MS=2000  cluster-node-timeout: how long a silent master lasts before its
#                                       replica is promoted (its slots' outage is ≈ this + 1.5 s); lower
#                                       risks failing over a master that was only starved of CPU
#   REDIS_CLUSTER_FULL_COVERAGE=no      cluster-require-full-coverage: `no` lets the healthy masters
#                                       serve their slots while a dead master's slots fail over; `yes`
#                                       refuses every slot (CLUSTERDOWN) until then (docs/scaling.md)
#
# Data, configs, logs and pids live in <dir> (one sub-folder per port). Nothing is persisted: every
# `up` that has to start a node starts it empty, so `--cluster create` always sees fresh nodes; a
# `start` after `kill` starts the node empty too, so it can only come back as a replica (full sync).
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

REPLICAS="${REDIS_CLUSTER_REPLICAS:-0}"
NODE_TIMEOUT_MS="${REDIS_CLUSTER_NODE_TIMEOUT_MS:-2000}"
FULL_COVERAGE="${REDIS_CLUSTER_FULL_COVERAGE:-no}"
case "$FULL_COVERAGE" in
  yes | no) ;;
  *) fail "REDIS_CLUSTER_FULL_COVERAGE must be yes or no, not $FULL_COVERAGE" ;;
esac

# A node that is a replica whose link to its master is up (it has the master's data and follows it).
replica_in_sync() {
  local info
  info="$(cli "$1" info replication 2>/dev/null)" || return 1
  grep -q '^role:slave' <<<"$info" && grep -q '^master_link_status:up' <<<"$info"
}

# start_node <dir> <port> [keep]: `keep` restarts a killed node with its nodes.conf (it rejoins).
start_node() {
  local dir="$1" port="$2" node="$1/$2" pid
  if pid="$(our_pid "$dir/$port.pid")"; then
    say "node $port: already running (ours, pid $pid)"
    return 0
  fi
  if cli "$port" ping >/dev/null 2>&1; then
    fail "port $port already answers PING and is not ours; pick other ports"
  fi
  if [ "${3:-}" = keep ]; then
    [ -f "$node/nodes.conf" ] || fail "node $port: no $node/nodes.conf to rejoin with (was it ever up?)"
  else
    rm -rf "$node"
  fi
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
cluster-node-timeout $NODE_TIMEOUT_MS
cluster-require-full-coverage $FULL_COVERAGE
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
  case "$REPLICAS" in
    0) [ $# -eq 4 ] || fail "usage: redis-cluster.sh up <dir> <port1> <port2> <port3>" ;;
    1) [ $# -eq 7 ] || fail "usage: REDIS_CLUSTER_REPLICAS=1 redis-cluster.sh up <dir> <port1> … <port6>" ;;
    *) fail "REDIS_CLUSTER_REPLICAS must be 0 or 1, not $REPLICAS" ;;
  esac
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
    wait_replicas_in_sync "$@"
    return 0
  fi
  local nodes=()
  for port in "$@"; do nodes+=("127.0.0.1:$port"); done
  if ! redis-cli --cluster create "${nodes[@]}" --cluster-replicas "$REPLICAS" --cluster-yes >"$dir/create.log" 2>&1; then
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
  wait_replicas_in_sync "$@"
  say "cluster ok on $* in $(since "$t0") ms: REDIS_URL=redis+cluster://$(
    IFS=,
    echo "${nodes[*]}"
  )"
}

# With replicas: every master has its replica, and every replica's link is up (the initial full
# sync is done), so a failover right after `up` has a replica with the data to promote.
wait_replicas_in_sync() {
  [ "$REPLICAS" = 1 ] || return 0
  local deadline=$(($(now_ms) + 60000)) port synced
  while :; do
    synced=0
    for port in "$@"; do if replica_in_sync "$port"; then synced=$((synced + 1)); fi; done
    [ "$synced" -lt $(($# / 2)) ] || break
    [ "$(now_ms)" -lt "$deadline" ] || fail "only $synced of $(($# / 2)) replicas in sync within 60 s"
    sleep 0.1
  done
  say "$synced replicas in sync"
}

cmd_kill() {
  [ $# -eq 2 ] || fail "usage: redis-cluster.sh kill <dir> <port>"
  local dir="$1" port="$2" pid
  pid="$(our_pid "$dir/$port.pid")" || fail "node $port: no running node of ours in $dir"
  kill -KILL "$pid"
  while alive "$pid"; do sleep 0.01; done
  rm -f "$dir/$port.pid"
  say "node $port: killed pid $pid (SIGKILL)"
}

# A killed master must not come back before its replica took its slots over: it would restart
# empty, still master by its nodes.conf, and its replica would sync the empty data set from it.
wait_failed_over() {
  local dir="$1" port="$2" id file other deadline
  id="$(awk '/myself/ { print $1 }' "$dir/$port/nodes.conf")"
  grep -q "myself,master.* [0-9]" "$dir/$port/nodes.conf" || return 0
  deadline=$(($(now_ms) + 60000))
  while :; do
    for file in "$dir"/*.pid; do
      [ -e "$file" ] || continue
      other="$(basename "$file" .pid)"
      [ "$other" != "$port" ] || continue
      if cli "$other" cluster nodes 2>/dev/null | grep -Eq "^$id [^ ]+ master,fail - [0-9]+ [0-9]+ [0-9]+ (dis)?connected$"; then
        return 0
      fi
    done
    [ "$(now_ms)" -lt "$deadline" ] || fail "node $port: its slots were not failed over within 60 s"
    sleep 0.05
  done
}

cmd_start() {
  [ $# -eq 2 ] || fail "usage: redis-cluster.sh start <dir> <port>"
  local dir="$1" port="$2" t0 deadline
  dir="$(cd "$dir" && pwd)"
  t0=$(now_ms)
  wait_failed_over "$dir" "$port"
  start_node "$dir" "$port" keep
  deadline=$(($(now_ms) + 60000))
  until replica_in_sync "$port" && cluster_ok "$port"; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "node $port: not a replica in sync within 60 s (log: $dir/$port/redis.log)"
    sleep 0.05
  done
  say "node $port: rejoined as a replica in sync in $(since "$t0") ms"
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
  kill) cmd_kill "${@:2}" ;;
  start) cmd_start "${@:2}" ;;
  *)
    sed -n '2,18p' "$0"
    exit 2
    ;;
esac
