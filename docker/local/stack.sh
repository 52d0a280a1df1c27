#!/usr/bin/env bash
# The local stack for hosts without a Docker engine: redis-server (Debian package) and a single-node
# KRaft Kafka broker run with `java` from the Apache Kafka jars on Maven Central.
#
#   stack.sh up       start what is missing (a second `up` is a no-op), print each step's time
#   stack.sh down     stop only what `up` started, by recorded pid
#   stack.sh status   exit 0 when both Redis and Kafka answer, else 1
#   stack.sh jaeger-build   build the trace store (below) without starting anything
#   stack.sh tool BIN PACKAGE   install Debian PACKAGE with apt-get when BIN is not on PATH (the
#                     suites use it for promtool and the console's chromium), print BIN's path
#
# TALLY_STACK=cluster (default `single`) brings up the topology of docs/scaling.md instead: three
# KRaft nodes, each broker and controller (KAFKA_PORTS 9192,9193,9194; KAFKA_CONTROLLER_PORTS
# 9195,9196,9197), whose defaults are replication 3 and min.insync.replicas 2, and a Redis Cluster of
# three masters with one replica each (REDIS_CLUSTER_PORTS 7101..7106, via redis-cluster.sh). `up`
# starts only the nodes that are not running, so a test can SIGKILL one broker and `up` it again.
# STACK_SERVICES (default "redis kafka") picks what to manage, e.g. "kafka" for the Kafka part alone.
# "jaeger" (never by default) adds a Jaeger all-in-one trace store with in-memory storage, for
# tracing (docs/operations.md): built once with `go build` from github.com/jaegertracing/jaeger at
# JAEGER_VERSION (v1.76.0) through the Go module proxy into .local/jaeger/<version>/ (minutes on two
# cores; later runs reuse it), listening on JAEGER_OTLP_HTTP_PORT (4318), JAEGER_OTLP_GRPC_PORT
# (4317), JAEGER_QUERY_PORT (16686: the query API, /api/traces; a source build has no UI),
# JAEGER_QUERY_GRPC_PORT (16685) and JAEGER_HEALTH_PORT (13133), all on 127.0.0.1.
#
# State lives in the git-ignored .local/ folder: .local/stack/ (pids, logs, data) and
# .local/kafka-dist/ (jars). Overrides, so a test can run a second private stack beside the shared one:
#   REDIS_URL (host/port probed, default redis://127.0.0.1:6379), REDIS_PORT, KAFKA_PORT (9092),
#   KAFKA_CONTROLLER_PORT (9093), STACK_DIR (.local/stack), KAFKA_DIST_DIR (.local/kafka-dist),
#   KAFKA_START_TIMEOUT (s, 120), KAFKA_HEAP_OPTS, KAFKA_CDS (1: reuse a class-data archive),
#   APT_LOCK_TIMEOUT_S (600: how long an install waits while another apt holds its lock).
#   In cluster mode: KAFKA_PORTS, KAFKA_CONTROLLER_PORTS, REDIS_CLUSTER_PORTS (comma-separated);
#   REDIS_CLUSTER_NODE_TIMEOUT_MS, REDIS_CLUSTER_FULL_COVERAGE (defaults in redis-cluster.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
STACK_DIR="$(realpath -m "${STACK_DIR:-$ROOT/.local/stack}")"
DIST_DIR="$(realpath -m "${KAFKA_DIST_DIR:-$ROOT/.local/kafka-dist}")"
POM="$ROOT/docker/local/kafka/pom.xml"
COPY_DEPS_GOAL="org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies"

redis_url="${REDIS_URL:-redis://127.0.0.1:6379}"
redis_hostport="${redis_url#*://}"
redis_hostport="${redis_hostport##*@}"
redis_hostport="${redis_hostport%%/*}"
redis_hostport="${redis_hostport%%,*}"
REDIS_HOST="${redis_hostport%%:*}"
REDIS_HOST="${REDIS_HOST:-127.0.0.1}"
[[ "$redis_hostport" == *:* ]] && url_port="${redis_hostport##*:}" || url_port=6379
REDIS_PORT="${REDIS_PORT:-$url_port}"
KAFKA_HOST=127.0.0.1
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_START_TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
KAFKA_CDS="${KAFKA_CDS:-1}"
APT_LOCK_TIMEOUT_S="${APT_LOCK_TIMEOUT_S:-600}"
APT_LOCK_RETRY_S="${APT_LOCK_RETRY_S:-3}"
JAEGER_VERSION="${JAEGER_VERSION:-v1.76.0}"
JAEGER_DIST_DIR="$(realpath -m "${JAEGER_DIST_DIR:-$ROOT/.local/jaeger}")"
JAEGER_OTLP_HTTP_PORT="${JAEGER_OTLP_HTTP_PORT:-4318}"
JAEGER_OTLP_GRPC_PORT="${JAEGER_OTLP_GRPC_PORT:-4317}"
JAEGER_QUERY_PORT="${JAEGER_QUERY_PORT:-16686}"
JAEGER_QUERY_GRPC_PORT="${JAEGER_QUERY_GRPC_PORT:-16685}"
JAEGER_HEALTH_PORT="${JAEGER_HEALTH_PORT:-13133}"
JAEGER_START_TIMEOUT="${JAEGER_START_TIMEOUT:-60}"
TALLY_STACK="${TALLY_STACK:-single}"
STACK_SERVICES="${STACK_SERVICES:-redis kafka}"
case "$TALLY_STACK" in
  single)
    KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx512m}"
    KAFKA_NODES=("$KAFKA_PORT:$KAFKA_CONTROLLER_PORT")
    ;;
  cluster)
    # Three JVMs share two cores in CI: small heaps and one GC thread each.
    KAFKA_HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms128m -Xmx384m -XX:ParallelGCThreads=1 -XX:ConcGCThreads=1}"
    IFS=, read -r -a kafka_ports <<<"${KAFKA_PORTS:-9192,9193,9194}"
    IFS=, read -r -a controller_ports <<<"${KAFKA_CONTROLLER_PORTS:-9195,9196,9197}"
    IFS=, read -r -a REDIS_CLUSTER_PORTS <<<"${REDIS_CLUSTER_PORTS:-7101,7102,7103,7104,7105,7106}"
    [ "${#kafka_ports[@]}" -eq 3 ] && [ "${#controller_ports[@]}" -eq 3 ] ||
      {
        echo "[stack] ERROR: KAFKA_PORTS and KAFKA_CONTROLLER_PORTS need three ports each" >&2
        exit 1
      }
    [ "${#REDIS_CLUSTER_PORTS[@]}" -eq 6 ] ||
      {
        echo "[stack] ERROR: REDIS_CLUSTER_PORTS needs six ports (three masters, three replicas)" >&2
        exit 1
      }
    KAFKA_NODES=()
    for i in 0 1 2; do KAFKA_NODES+=("${kafka_ports[$i]}:${controller_ports[$i]}"); done
    ;;
  *)
    echo "[stack] ERROR: TALLY_STACK must be single or cluster (got \"$TALLY_STACK\")" >&2
    exit 1
    ;;
esac
wants() { [[ " $STACK_SERVICES " == *" $1 "* ]]; }

REDIS_PIDFILE="$STACK_DIR/redis.pid"
REDIS_CLUSTER_DIR="$STACK_DIR/redis-cluster"
KAFKA_CLUSTER_ID_FILE="$STACK_DIR/kafka-cluster.id"
CDS_ARCHIVE="$DIST_DIR/kafka-cds.jsa"
CDS_PENDING="$STACK_DIR/kafka-cds.jsa.tmp"

now_ms() { date +%s%3N; }
say() { echo "[stack] $*"; }
fail() {
  echo "[stack] ERROR: $*" >&2
  exit 1
}
since() { echo $(($(now_ms) - $1)); }

# --- probes -------------------------------------------------------------------------------------

redis_answers() {
  local reply
  if command -v redis-cli >/dev/null 2>&1; then
    reply="$(timeout 2 redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null || true)"
  else
    # shellcheck disable=SC2016
    reply="$(timeout 2 bash -c 'exec 3<>"/dev/tcp/$0/$1" && printf "PING\r\n" >&3 && IFS= read -r l <&3 && printf %s "$l"' \
      "$REDIS_HOST" "$REDIS_PORT" 2>/dev/null || true)"
  fi
  # A password-protected server answering NOAUTH is still a Redis that is up.
  [[ "$reply" == *PONG* || "$reply" == *NOAUTH* ]]
}

port_open() {
  # shellcheck disable=SC2016
  timeout 1 bash -c 'exec 3<>"/dev/tcp/$0/$1"' "$1" "$2" 2>/dev/null
}

# An open port is not enough: the broker accepts connections well before it serves requests. This
# sends a real ApiVersions v0 request (correlation id 7, client id "stack") and expects error 0.
kafka_answers() {
  local reply
  # shellcheck disable=SC2016
  reply="$(timeout 3 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "\x00\x00\x00\x0f\x00\x12\x00\x00\x00\x00\x00\x07\x00\x05stack" >&3
    head -c 10 <&3 | od -An -tx1 | tr -d " \n"' "$KAFKA_HOST" "$KAFKA_PORT" 2>/dev/null || true)"
  [[ "$reply" =~ ^[0-9a-f]{8}000000070000$ ]]
}

# Prints the recorded pid when that process is alive and still the program we started (a pid can be
# reused after a reboot); otherwise forgets the stale pid file.
our_pid() {
  local file="$1" token="$2" pid
  [ -f "$file" ] || return 1
  pid="$(cat "$file" 2>/dev/null || true)"
  if [[ "$pid" =~ ^[0-9]+$ ]] && [ -r "/proc/$pid/cmdline" ] &&
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$token"; then
    echo "$pid"
    return 0
  fi
  rm -f "$file"
  return 1
}

# A zombie (state Z) has exited even though its /proc entry remains until it is reaped.
alive() {
  local state
  state="$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)" || return 1
  [ -n "$state" ] && [ "$state" != Z ]
}

# Runs "$@" detached in its own session (so closing the caller's terminal or process group leaves it
# running) and writes its real pid: `exec` keeps the pid that `echo $$` recorded. fds 8 and 9 are our
# locks: a daemon that inherited one would hold it for its whole life.
spawn() {
  local pidfile="$1" logfile="$2"
  shift 2
  rm -f "$pidfile"
  # shellcheck disable=SC2016
  setsid bash -c 'echo $$ >"$0.tmp" && mv "$0.tmp" "$0" && exec "$@"' "$pidfile" "$@" </dev/null >>"$logfile" 2>&1 8>&- 9>&- &
  local deadline=$(($(now_ms) + 5000))
  until [ -s "$pidfile" ]; do
    [ "$(now_ms)" -lt "$deadline" ] || fail "could not start $1 (see $logfile)"
    sleep 0.05
  done
}

# --- installs -----------------------------------------------------------------------------------

# One apt-get run that waits while another apt holds its locks (unattended-upgrades, another suite's
# `stack.sh tool`, an operator's apt): `DPkg::Lock::Timeout` makes apt-get itself wait for the dpkg
# locks, but `apt-get update`'s lists lock has no such wait, so a run refused for a lock is repeated
# every APT_LOCK_RETRY_S until APT_LOCK_TIMEOUT_S has passed. Output is appended to apt.log.
apt_get() {
  local deadline=$(($(date +%s) + APT_LOCK_TIMEOUT_S)) out="$STACK_DIR/apt.last" rc said=0
  while :; do
    rc=0
    $sudo apt-get -o DPkg::Lock::Timeout="$APT_LOCK_TIMEOUT_S" "$@" >"$out" 2>&1 || rc=$?
    cat "$out" >>"$STACK_DIR/apt.log"
    [ "$rc" -ne 0 ] || return 0
    grep -qE 'Could not get lock|Unable to acquire the dpkg frontend lock|Unable to lock' "$out" || return "$rc"
    [ "$(date +%s)" -lt "$deadline" ] || return "$rc"
    [ "$said" -eq 1 ] || say "apt: another apt holds its lock; waiting up to ${APT_LOCK_TIMEOUT_S} s"
    said=1
    sleep "$APT_LOCK_RETRY_S"
  done
}

apt_install() {
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # Debian's postinst would start its own redis-server on 6379 through the init script; we want
  # only ours, so forbid service starts during the install unless the machine already does.
  local policy=/usr/sbin/policy-rc.d made_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod +x "$policy"
    made_policy=1
  fi
  local rc=0
  : >"$STACK_DIR/apt.log"
  apt_get update -q && apt_get install -y -q --no-install-recommends "$@" || rc=$?
  [ "$made_policy" -eq 0 ] || $sudo rm -f "$policy"
  if [ "$rc" -ne 0 ]; then
    tail -n 20 "$STACK_DIR/apt.log" >&2
    fail "apt-get install $* failed (log: $STACK_DIR/apt.log)"
  fi
}

ensure_tool() {
  local bin="$1" package="$2" t0
  command -v "$bin" >/dev/null 2>&1 && return 0
  t0=$(now_ms)
  say "$bin: missing, installing Debian package $package with apt-get"
  apt_install "$package"
  command -v "$bin" >/dev/null 2>&1 || fail "$package installed but $bin is still not on PATH"
  say "$bin: installed $package in $(since "$t0") ms"
}

# --- redis --------------------------------------------------------------------------------------

redis_up() {
  local pid t0
  if redis_answers; then
    if pid="$(our_pid "$REDIS_PIDFILE" redis-server)"; then
      say "redis: already running (ours, pid $pid) at $REDIS_HOST:$REDIS_PORT"
    else
      say "redis: already answering at $REDIS_HOST:$REDIS_PORT (not ours), using it"
    fi
    return 0
  fi
  case "$REDIS_HOST" in
    127.* | localhost | ::1) ;;
    *) fail "REDIS_URL points at $REDIS_HOST:$REDIS_PORT, which does not answer; the local stack only starts Redis on loopback" ;;
  esac
  if pid="$(our_pid "$REDIS_PIDFILE" redis-server)"; then
    fail "redis: our pid $pid is alive but does not answer PING (see $STACK_DIR/redis.log); run down first"
  fi

  ensure_tool redis-server redis-server
  if redis_answers; then
    say "redis: the package's own server answers at $REDIS_HOST:$REDIS_PORT (not ours), using it"
    return 0
  fi

  t0=$(now_ms)
  mkdir -p "$STACK_DIR/redis"
  cat >"$STACK_DIR/redis/redis.conf" <<EOF
# Written by docker/local/stack.sh: a throwaway development server, nothing persisted.
bind 127.0.0.1
port $REDIS_PORT
protected-mode yes
daemonize no
dir $STACK_DIR/redis
logfile $STACK_DIR/redis.log
save ""
appendonly no
EOF
  spawn "$REDIS_PIDFILE" "$STACK_DIR/redis.out" redis-server "$STACK_DIR/redis/redis.conf"
  pid="$(cat "$REDIS_PIDFILE")"
  local deadline=$(($(now_ms) + 15000))
  until redis_answers; do
    if ! alive "$pid"; then
      tail -n 20 "$STACK_DIR/redis.log" "$STACK_DIR/redis.out" >&2 2>/dev/null || true
      rm -f "$REDIS_PIDFILE"
      fail "redis: redis-server exited during start"
    fi
    [ "$(now_ms)" -lt "$deadline" ] || fail "redis: no PONG within 15 s (log: $STACK_DIR/redis.log)"
    sleep 0.05
  done
  say "redis: started pid $pid in $(since "$t0") ms at $REDIS_HOST:$REDIS_PORT"
}

# --- kafka --------------------------------------------------------------------------------------

# Points the kafka_* functions at node $1 (1-based) of KAFKA_NODES. The single node keeps the paths
# it always had, so an existing .local/stack is picked up as before.
kafka_node() {
  NODE_ID="$1"
  local ports="${KAFKA_NODES[$((NODE_ID - 1))]}"
  KAFKA_PORT="${ports%%:*}"
  KAFKA_CONTROLLER_PORT="${ports##*:}"
  if [ "$TALLY_STACK" = single ]; then
    KAFKA_PIDFILE="$STACK_DIR/kafka.pid"
    KAFKA_CONF_DIR="$STACK_DIR/kafka"
    KAFKA_DATA_DIR="$STACK_DIR/kafka-data"
    KAFKA_LOG="$STACK_DIR/kafka.log"
  else
    KAFKA_PIDFILE="$STACK_DIR/kafka-$NODE_ID.pid"
    KAFKA_CONF_DIR="$STACK_DIR/kafka-$NODE_ID"
    KAFKA_DATA_DIR="$STACK_DIR/kafka-$NODE_ID-data"
    KAFKA_LOG="$STACK_DIR/kafka-$NODE_ID.log"
  fi
}

kafka_voters() {
  local i voters=()
  for i in "${!KAFKA_NODES[@]}"; do voters+=("$((i + 1))@127.0.0.1:${KAFKA_NODES[$i]##*:}"); done
  (
    IFS=,
    echo "${voters[*]}"
  )
}

kafka_brokers() {
  local n brokers=()
  for n in "${KAFKA_NODES[@]}"; do brokers+=("$KAFKA_HOST:${n%%:*}"); done
  (
    IFS=,
    echo "${brokers[*]}"
  )
}

kafka_resolve() {
  local t0 want
  ensure_tool java openjdk-17-jre-headless
  # Private stacks (other STACK_DIR) share the jars: one resolution at a time.
  mkdir -p "$DIST_DIR"
  exec 8>"$DIST_DIR/.lock"
  flock -w 600 8 || fail "another stack.sh is resolving into $DIST_DIR"
  want="$(sha256sum "$POM" | cut -c1-16)"
  if [ "$(cat "$DIST_DIR/.resolved" 2>/dev/null || true)" = "$want" ] && compgen -G "$DIST_DIR/libs/kafka_2.13-*.jar" >/dev/null; then
    say "kafka: jars already in ${DIST_DIR#"$ROOT/"}/libs ($(find "$DIST_DIR/libs" -name '*.jar' | wc -l) jars), skipping Maven"
    exec 8>&-
    return 0
  fi
  ensure_tool mvn maven
  t0=$(now_ms)
  say "kafka: resolving the broker jars from Maven Central (first run downloads into ~/.m2)"
  rm -rf "$DIST_DIR/libs" "$DIST_DIR/.resolved" "$CDS_ARCHIVE"
  if ! mvn -B -q -f "$POM" "$COPY_DEPS_GOAL" -DincludeScope=runtime \
    -DoutputDirectory="$DIST_DIR/libs" >"$DIST_DIR/mvn.log" 2>&1; then
    tail -n 30 "$DIST_DIR/mvn.log" >&2
    fail "kafka: Maven could not resolve the broker (log: $DIST_DIR/mvn.log)"
  fi
  echo "$want" >"$DIST_DIR/.resolved"
  exec 8>&-
  say "kafka: resolved $(find "$DIST_DIR/libs" -name '*.jar' | wc -l) jars in $(since "$t0") ms"
}

kafka_configure() {
  # One node: nothing to replicate to. Three: every partition on every node, and acks=all needs two
  # of them, so one node may be lost without refusing a write or losing an acknowledged one.
  local rf=1 min_isr=1
  [ "${#KAFKA_NODES[@]}" -lt 3 ] || {
    rf=3
    min_isr=2
  }
  mkdir -p "$KAFKA_CONF_DIR" "$KAFKA_DATA_DIR"
  cat >"$KAFKA_CONF_DIR/server.properties" <<EOF
# Written by docker/local/stack.sh ($TALLY_STACK): KRaft node $NODE_ID of ${#KAFKA_NODES[@]} for development and tests.
process.roles=broker,controller
node.id=$NODE_ID
controller.quorum.voters=$(kafka_voters)
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$KAFKA_DATA_DIR
num.partitions=3
default.replication.factor=$rf
min.insync.replicas=$min_isr
offsets.topic.replication.factor=$rf
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$min_isr
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=2
log.cleaner.dedupe.buffer.size=1048577
EOF
  # stderr only, so `StorageTool random-uuid` prints nothing but the id on stdout; the broker's
  # stderr goes to its log file.
  cat >"$KAFKA_CONF_DIR/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stderr
log4j.appender.stderr=org.apache.log4j.ConsoleAppender
log4j.appender.stderr.Target=System.err
log4j.appender.stderr.layout=org.apache.log4j.PatternLayout
log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
log4j.logger.kafka.log.LogCleaner=WARN
log4j.logger.org.apache.kafka.storage.internals.log=WARN
log4j.logger.kafka.log.LogManager=WARN
EOF
}

kafka_java() {
  java -Dlog4j.configuration="file:$KAFKA_CONF_DIR/log4j.properties" -cp "$DIST_DIR/libs/*" "$@"
}

kafka_format() {
  local t0 id
  if [ -f "$KAFKA_DATA_DIR/meta.properties" ]; then
    say "kafka: storage already formatted (cluster $(sed -n 's/^cluster.id=//p' "$KAFKA_DATA_DIR/meta.properties")), skipping"
    return 0
  fi
  t0=$(now_ms)
  # Every node of a cluster is formatted with the same cluster id; a node formatted again after its
  # data was lost rejoins the cluster the others still have.
  if [ -s "$KAFKA_CLUSTER_ID_FILE" ]; then
    id="$(cat "$KAFKA_CLUSTER_ID_FILE")"
  else
    id="$(kafka_java -Xshare:auto kafka.tools.StorageTool random-uuid 2>"$STACK_DIR/kafka-format.log")" ||
      fail "kafka: StorageTool random-uuid failed (log: $STACK_DIR/kafka-format.log)"
    echo "$id" >"$KAFKA_CLUSTER_ID_FILE"
  fi
  # Static quorum (controller.quorum.voters) and no --standalone: mixing them fails (KAFKA-18987).
  if ! kafka_java kafka.tools.StorageTool format -t "$id" -c "$KAFKA_CONF_DIR/server.properties" \
    >>"$STACK_DIR/kafka-format.log" 2>&1; then
    tail -n 20 "$STACK_DIR/kafka-format.log" >&2
    fail "kafka: formatting the storage failed"
  fi
  say "kafka: node $NODE_ID formatted storage (cluster $id) in $(since "$t0") ms"
}

kafka_wait_ready() {
  local pid="$1" t0="$2"
  local deadline=$(($(now_ms) + KAFKA_START_TIMEOUT * 1000))
  until grep -q 'Kafka Server started' "$KAFKA_LOG" 2>/dev/null && kafka_answers; do
    if ! alive "$pid"; then
      tail -n 40 "$KAFKA_LOG" >&2 || true
      rm -f "$KAFKA_PIDFILE"
      fail "kafka: the broker (pid $pid) exited during start (log: $KAFKA_LOG)"
    fi
    if [ "$(now_ms)" -ge "$deadline" ]; then
      tail -n 40 "$KAFKA_LOG" >&2 || true
      fail "kafka: not ready within ${KAFKA_START_TIMEOUT} s (pid $pid still running, log: $KAFKA_LOG)"
    fi
    sleep 0.1
  done
  say "kafka: node $NODE_ID ready, pid $pid, in $(since "$t0") ms at $KAFKA_HOST:$KAFKA_PORT"
}

# Starts the selected node unless it runs; prints the pid to wait for (nothing when there is none).
kafka_node_start() {
  local pid t0
  if pid="$(our_pid "$KAFKA_PIDFILE" kafka.Kafka)"; then
    if kafka_answers && grep -q 'Kafka Server started' "$KAFKA_LOG" 2>/dev/null; then
      say "kafka: node $NODE_ID already running (ours, pid $pid) at $KAFKA_HOST:$KAFKA_PORT" >&2
    else
      say "kafka: node $NODE_ID (ours, pid $pid) is still starting, waiting" >&2
      echo "$pid"
    fi
    return 0
  fi
  if kafka_answers || port_open "$KAFKA_HOST" "$KAFKA_PORT"; then
    say "kafka: something already listens at $KAFKA_HOST:$KAFKA_PORT (not ours), using it" >&2
    return 0
  fi
  kafka_resolve >&2
  kafka_configure
  kafka_format >&2

  # Class Data Sharing: the first broker run records the classes it loaded into an archive when it
  # exits (at `down`); later runs map that archive instead of parsing and verifying the jars again.
  # Only a single node records: three JVMs would write the same file at exit.
  local cds=()
  if [ "$KAFKA_CDS" = 1 ]; then
    if [ -s "$CDS_ARCHIVE" ]; then
      cds=("-XX:SharedArchiveFile=$CDS_ARCHIVE")
    elif [ "$TALLY_STACK" = single ]; then
      cds=("-XX:ArchiveClassesAtExit=$CDS_PENDING")
    fi
  fi
  [ ! -f "$KAFKA_LOG" ] || mv -f "$KAFKA_LOG" "$KAFKA_LOG.1"
  # shellcheck disable=SC2086 # KAFKA_HEAP_OPTS holds several flags
  spawn "$KAFKA_PIDFILE" "$KAFKA_LOG" java $KAFKA_HEAP_OPTS -XX:+UseG1GC -XX:MaxGCPauseMillis=20 \
    -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true \
    "${cds[@]}" -Dlog4j.configuration="file:$KAFKA_CONF_DIR/log4j.properties" \
    -Dkafka.logs.dir="$STACK_DIR" -cp "$DIST_DIR/libs/*" kafka.Kafka "$KAFKA_CONF_DIR/server.properties"
  pid="$(cat "$KAFKA_PIDFILE")"
  say "kafka: starting node $NODE_ID pid $pid${cds:+ (${cds[0]%%=*})}" >&2
  echo "$pid"
}

# Every missing node starts before any is waited for: a KRaft node is not ready until a majority of
# the controllers answer.
kafka_up() {
  local i t0 pids=()
  t0=$(now_ms)
  for i in "${!KAFKA_NODES[@]}"; do
    kafka_node "$((i + 1))"
    pids[i]="$(kafka_node_start)"
  done
  for i in "${!KAFKA_NODES[@]}"; do
    [ -n "${pids[i]}" ] || continue
    kafka_node "$((i + 1))"
    kafka_wait_ready "${pids[i]}" "$t0"
  done
}

# --- jaeger -------------------------------------------------------------------------------------

JAEGER_PIDFILE="$STACK_DIR/jaeger.pid"
JAEGER_LOG="$STACK_DIR/jaeger.log"

# `go install github.com/jaegertracing/jaeger/cmd/jaeger@<version>` is refused: the module's go.mod
# has a replace directive, which `go install pkg@version` does not allow. So the module is fetched
# with `go mod download` (the Go module proxy) and built in its own folder of the module cache, where
# that go.mod is the main module and its replace applies. Private stacks share the binary. Prints
# the binary's path (and nothing else) on stdout.
jaeger_install() {
  local bin="$JAEGER_DIST_DIR/$JAEGER_VERSION/jaeger" dir t0
  if [ -x "$bin" ]; then
    say "jaeger: $JAEGER_VERSION already built in ${bin#"$ROOT/"}, skipping go build" >&2
    echo "$bin"
    return 0
  fi
  command -v go >/dev/null 2>&1 || fail "jaeger: building it needs Go (the go command) on PATH"
  mkdir -p "$JAEGER_DIST_DIR/$JAEGER_VERSION"
  exec 8>"$JAEGER_DIST_DIR/.lock"
  flock -w 1800 8 || fail "another stack.sh is building Jaeger into $JAEGER_DIST_DIR"
  if [ ! -x "$bin" ]; then
    t0=$(now_ms)
    say "jaeger: building $JAEGER_VERSION with $(go version | cut -d' ' -f3), once (minutes on two cores)" >&2
    dir="$(go mod download -json "github.com/jaegertracing/jaeger@$JAEGER_VERSION" |
      sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" || true
    [ -n "$dir" ] && [ -d "$dir" ] || fail "jaeger: go mod download of $JAEGER_VERSION failed"
    if ! (cd "$dir" && GOFLAGS=-buildvcs=false go build -trimpath -o "$bin.tmp" ./cmd/jaeger) \
      >"$JAEGER_DIST_DIR/build.log" 2>&1; then
      tail -n 30 "$JAEGER_DIST_DIR/build.log" >&2
      fail "jaeger: go build failed (log: $JAEGER_DIST_DIR/build.log)"
    fi
    mv -f "$bin.tmp" "$bin"
    say "jaeger: built in $(since "$t0") ms" >&2
  fi
  exec 8>&-
  echo "$bin"
}

# The all-in-one's defaults listen on a dozen ports (Jaeger and Zipkin receivers, sampling, its own
# metrics): this config keeps OTLP in, the query API and UI out, health, and nothing else.
jaeger_configure() {
  mkdir -p "$STACK_DIR/jaeger"
  cat >"$STACK_DIR/jaeger/config.yaml" <<EOF
# Written by docker/local/stack.sh: an in-memory trace store for development and tests.
service:
  extensions: [jaeger_storage, jaeger_query, healthcheckv2]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  healthcheckv2:
    use_v2: true
    http:
      endpoint: 127.0.0.1:$JAEGER_HEALTH_PORT
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:$JAEGER_QUERY_PORT
    grpc:
      endpoint: 127.0.0.1:$JAEGER_QUERY_GRPC_PORT
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:$JAEGER_OTLP_GRPC_PORT
      http:
        endpoint: 127.0.0.1:$JAEGER_OTLP_HTTP_PORT
processors:
  batch:
    timeout: 200ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
EOF
}

# Ready = the query API answers and the OTLP receiver accepts connections.
jaeger_answers() {
  # shellcheck disable=SC2016
  timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" || exit 1
    printf "GET /api/services HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n" >&3
    head -c 12 <&3 | grep -q " 200"' "$JAEGER_QUERY_PORT" 2>/dev/null &&
    port_open 127.0.0.1 "$JAEGER_OTLP_HTTP_PORT"
}

jaeger_up() {
  local pid t0 bin
  if pid="$(our_pid "$JAEGER_PIDFILE" jaeger)"; then
    say "jaeger: already running (ours, pid $pid), query on 127.0.0.1:$JAEGER_QUERY_PORT"
    return 0
  fi
  if port_open 127.0.0.1 "$JAEGER_QUERY_PORT"; then
    say "jaeger: something already listens at 127.0.0.1:$JAEGER_QUERY_PORT (not ours), using it"
    return 0
  fi
  bin="$(jaeger_install)"
  jaeger_configure
  t0=$(now_ms)
  [ ! -f "$JAEGER_LOG" ] || mv -f "$JAEGER_LOG" "$JAEGER_LOG.1"
  spawn "$JAEGER_PIDFILE" "$JAEGER_LOG" "$bin" --config "file:$STACK_DIR/jaeger/config.yaml"
  pid="$(cat "$JAEGER_PIDFILE")"
  local deadline=$(($(now_ms) + JAEGER_START_TIMEOUT * 1000))
  until jaeger_answers; do
    if ! alive "$pid"; then
      tail -n 30 "$JAEGER_LOG" >&2 || true
      rm -f "$JAEGER_PIDFILE"
      fail "jaeger: exited during start (log: $JAEGER_LOG)"
    fi
    [ "$(now_ms)" -lt "$deadline" ] || fail "jaeger: not ready within ${JAEGER_START_TIMEOUT} s (log: $JAEGER_LOG)"
    sleep 0.1
  done
  say "jaeger: started pid $pid in $(since "$t0") ms: OTLP http://127.0.0.1:$JAEGER_OTLP_HTTP_PORT, query http://127.0.0.1:$JAEGER_QUERY_PORT"
}

jaeger_status() {
  local pid
  if jaeger_answers; then
    if pid="$(our_pid "$JAEGER_PIDFILE" jaeger)"; then
      say "jaeger: running (ours, pid $pid) at 127.0.0.1:$JAEGER_QUERY_PORT"
    else
      say "jaeger: running (not ours) at 127.0.0.1:$JAEGER_QUERY_PORT"
    fi
    return 0
  fi
  say "jaeger: stopped"
  return 1
}

# --- redis cluster --------------------------------------------------------------------------------

# Without fds 8 and 9: the nodes it starts would inherit our locks and hold them for their life.
redis_cluster() {
  REDIS_CLUSTER_REPLICAS=1 bash "$ROOT/docker/local/redis-cluster.sh" "$@" 8>&- 9>&-
}

redis_cluster_url() {
  local p nodes=()
  for p in "${REDIS_CLUSTER_PORTS[@]}"; do nodes+=("$REDIS_HOST:$p"); done
  (
    IFS=,
    echo "redis+cluster://${nodes[*]}"
  )
}

redis_cluster_up() {
  ensure_tool redis-server redis-server
  redis_cluster up "$REDIS_CLUSTER_DIR" "${REDIS_CLUSTER_PORTS[@]}"
}

# --- stop ---------------------------------------------------------------------------------------

stop_pid() {
  local name="$1" pidfile="$2" token="$3" pid t0
  if ! pid="$(our_pid "$pidfile" "$token")"; then
    say "$name: nothing of ours running"
    return 1
  fi
  t0=$(now_ms)
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$(($(now_ms) + 30000))
  while alive "$pid" && [ "$(now_ms)" -lt "$deadline" ]; do sleep 0.1; done
  if alive "$pid"; then
    say "$name: pid $pid ignored SIGTERM for 30 s, sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    while alive "$pid"; do sleep 0.1; done
    rm -f "$pidfile"
    return 2
  fi
  rm -f "$pidfile"
  say "$name: stopped pid $pid in $(since "$t0") ms"
}

# --- commands -----------------------------------------------------------------------------------

lock() {
  mkdir -p "$STACK_DIR"
  exec 9>"$STACK_DIR/.lock"
  flock -w 300 9 || fail "another stack.sh holds $STACK_DIR/.lock"
}

cmd_up() {
  local t0 redis_url
  t0=$(now_ms)
  lock
  if [ "$TALLY_STACK" = single ]; then
    ! wants redis || redis_up
    redis_url="redis://$REDIS_HOST:$REDIS_PORT"
  else
    ! wants redis || redis_cluster_up
    redis_url="$(redis_cluster_url)"
  fi
  ! wants kafka || kafka_up
  ! wants jaeger || jaeger_up
  local urls=()
  ! wants redis || urls+=("REDIS_URL=$redis_url")
  ! wants kafka || urls+=("KAFKA_BROKERS=$(kafka_brokers)")
  ! wants jaeger || urls+=("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$JAEGER_OTLP_HTTP_PORT")
  say "up in $(since "$t0") ms: ${urls[*]} (logs: ${STACK_DIR#"$ROOT/"})"
}

cmd_down() {
  local i rc
  lock
  ! wants jaeger || stop_pid jaeger "$JAEGER_PIDFILE" jaeger || true
  if wants kafka && [ "$TALLY_STACK" = single ]; then
    kafka_node 1
    rc=0
    stop_pid kafka "$KAFKA_PIDFILE" kafka.Kafka || rc=$?
    # A clean exit has written the class-data archive; a killed JVM may have left half of one.
    if [ "$rc" -eq 0 ] && [ -s "$CDS_PENDING" ]; then
      mv -f "$CDS_PENDING" "$CDS_ARCHIVE"
      say "kafka: saved class-data archive for faster starts"
    fi
    rm -f "$CDS_PENDING"
  elif wants kafka; then
    # All nodes at once: stopped one by one, the last would wait for a controller quorum that is
    # already gone before it gives up its partitions (30 s, then SIGKILL).
    for i in "${!KAFKA_NODES[@]}"; do
      kafka_node "$((i + 1))"
      stop_pid "kafka node $NODE_ID" "$KAFKA_PIDFILE" kafka.Kafka &
    done
    wait || true
  fi
  wants redis || return 0
  if [ "$TALLY_STACK" = single ]; then
    stop_pid redis "$REDIS_PIDFILE" redis-server || true
  else
    redis_cluster down "$REDIS_CLUSTER_DIR"
  fi
}

redis_status() {
  local pid
  if redis_answers; then
    if pid="$(our_pid "$REDIS_PIDFILE" redis-server)"; then
      say "redis: running (ours, pid $pid) at $REDIS_HOST:$REDIS_PORT"
    else
      say "redis: running (not ours) at $REDIS_HOST:$REDIS_PORT"
    fi
    return 0
  fi
  if pid="$(our_pid "$REDIS_PIDFILE" redis-server)"; then
    say "redis: not answering (ours, pid $pid) at $REDIS_HOST:$REDIS_PORT"
  else
    say "redis: stopped"
  fi
  return 1
}

# Every node answers and sees the cluster ok; pids are the ones redis-cluster.sh recorded.
redis_cluster_status() {
  local p pid info ok=0
  for p in "${REDIS_CLUSTER_PORTS[@]}"; do
    pid="$(cat "$REDIS_CLUSTER_DIR/$p.pid" 2>/dev/null || echo none)"
    info="$(timeout 2 redis-cli -h "$REDIS_HOST" -p "$p" info replication 2>/dev/null | tr -d '\r' || true)"
    if [ -z "$info" ]; then
      ok=1
      say "redis cluster: node $p stopped (recorded pid $pid)"
    elif timeout 2 redis-cli -h "$REDIS_HOST" -p "$p" cluster info 2>/dev/null | grep -q '^cluster_state:ok'; then
      say "redis cluster: node $p running, $(sed -n 's/^role://p' <<<"$info") (pid $pid)"
    else
      ok=1
      say "redis cluster: node $p answers but its cluster is not ok (pid $pid)"
    fi
  done
  return "$ok"
}

kafka_status() {
  local i pid ok=0
  for i in "${!KAFKA_NODES[@]}"; do
    kafka_node "$((i + 1))"
    if kafka_answers; then
      if pid="$(our_pid "$KAFKA_PIDFILE" kafka.Kafka)"; then
        say "kafka: node $NODE_ID running (ours, pid $pid) at $KAFKA_HOST:$KAFKA_PORT"
      else
        say "kafka: node $NODE_ID running (not ours) at $KAFKA_HOST:$KAFKA_PORT"
      fi
    else
      ok=1
      if pid="$(our_pid "$KAFKA_PIDFILE" kafka.Kafka)"; then
        say "kafka: node $NODE_ID not answering yet (ours, pid $pid) at $KAFKA_HOST:$KAFKA_PORT"
      else
        say "kafka: node $NODE_ID stopped"
      fi
    fi
  done
  return "$ok"
}

cmd_status() {
  local ok=0
  if wants redis; then
    if [ "$TALLY_STACK" = single ]; then redis_status || ok=1; else redis_cluster_status || ok=1; fi
  fi
  ! wants kafka || kafka_status || ok=1
  ! wants jaeger || jaeger_status || ok=1
  return "$ok"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  # Build the trace store only (no start): `./dev test` runs it in the background while the gate's
  # first steps run, so the tracing suite finds it built.
  jaeger-build) jaeger_install >/dev/null ;;
  tool)
    mkdir -p "$STACK_DIR"
    ensure_tool "${2:?stack.sh tool BIN PACKAGE}" "${3:?stack.sh tool BIN PACKAGE}" >&2
    command -v "$2"
    ;;
  *)
    sed -n '2,23p' "$0"
    exit 2
    ;;
esac
