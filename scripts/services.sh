#!/usr/bin/env bash
# ./dev start | stop | status — the whole of Tally on this machine: the local stack (Redis + a KRaft
# Kafka broker), then decision-api, relay and projector from the built tree. Pids and logs live in
# .local/run; only processes recorded there are ever stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
run=.local/run
mkdir -p "$run"

now_ms() { date +%s%3N; }
say() { printf '[tally] %s\n' "$*"; }

apps=(decision-api relay projector)
port_of() {
  case "$1" in
    decision-api) echo "${TALLY_HTTP_PORT:-8080}" ;;
    projector) echo "${TALLY_PROJECTOR_PORT:-8082}" ;;
    relay) echo "${TALLY_RELAY_PORT:-8083}" ;;
  esac
}
alive() { [ -f "$run/$1.pid" ] && kill -0 "$(cat "$run/$1.pid")" 2>/dev/null; }

# Secrets: the caller's environment wins; else the ones generated on an earlier start; else new ones.
load_secrets() {
  if [ -z "${TALLY_API_TOKENS:-}" ] || [ -z "${TALLY_ADMIN_TOKEN:-}" ] || [ -z "${TALLY_TOKEN_SECRET:-}" ]; then
    if [ ! -f .local/secrets.env ]; then
      {
        echo "TALLY_API_TOKENS=caller-$(node -e 'process.stdout.write(require("crypto").randomBytes(18).toString("base64url"))')"
        echo "TALLY_ADMIN_TOKEN=admin-$(node -e 'process.stdout.write(require("crypto").randomBytes(18).toString("base64url"))')"
        echo "TALLY_TOKEN_SECRET=$(node -e 'process.stdout.write(require("crypto").randomBytes(32).toString("base64url"))')"
      } > .local/secrets.env
      chmod 600 .local/secrets.env
      say "generated secrets in .local/secrets.env"
    fi
    set -a
    # shellcheck disable=SC1091
    source .local/secrets.env
    set +a
  fi
  export TALLY_POLICIES="${TALLY_POLICIES:-config/policies.yaml}"
  # The operator console (served by the projector) samples and proxies the other two services.
  export TALLY_CONSOLE_DECISION_API_URL="${TALLY_CONSOLE_DECISION_API_URL:-http://127.0.0.1:$(port_of decision-api)}"
  export TALLY_CONSOLE_RELAY_URL="${TALLY_CONSOLE_RELAY_URL:-http://127.0.0.1:$(port_of relay)}"
}

wait_ready() {
  local app=$1 port=$2 deadline=$(( $(now_ms) + 60000 ))
  while [ "$(now_ms)" -lt "$deadline" ]; do
    if ! alive "$app"; then
      say "$app exited; last log lines:"; tail -n 20 "$run/$app.log" >&2; return 1
    fi
    if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  say "$app not ready after 60 s; last log lines:"; tail -n 20 "$run/$app.log" >&2
  return 1
}

start() {
  local t0; t0=$(now_ms)
  bash docker/local/stack.sh up
  local t1; t1=$(now_ms)
  npm run -s build
  say "build: $(( $(now_ms) - t1 )) ms"
  load_secrets
  for app in "${apps[@]}"; do
    if alive "$app"; then say "$app: already running (pid $(cat "$run/$app.pid"))"; continue; fi
    local ts; ts=$(now_ms)
    # The decision API runs with the V8 flags and malloc setting of `npm run start:decision-api`
    # (docs/benchmarks.md, "Decision API memory"; libs/cluster/src/cluster.runtime.ts); its primary
    # gives its workers jemalloc when the system has it (Debian's redis-server brings it).
    # The relay and the projector run with `npm run start:relay` / `start:projector`'s young generation
    # cap (libs/cluster/src/cluster.runtime.ts, LEDGER_NODE_FLAGS).
    local flags=(--max-semi-space-size=8) envs=()
    if [ "$app" = decision-api ]; then
      flags=(--max-semi-space-size=8 --heap-growing-percent=50)
      envs=(MALLOC_ARENA_MAX=2)
    fi
    env "${envs[@]}" nohup node "${flags[@]}" "dist/apps/$app/src/main.js" >"$run/$app.log" 2>&1 &
    echo $! >"$run/$app.pid"
    wait_ready "$app" "$(port_of "$app")"
    say "$app: ready in $(( $(now_ms) - ts )) ms (pid $(cat "$run/$app.pid"), log $run/$app.log)"
  done
  cat <<INFO

[tally] up in $(( $(now_ms) - t0 )) ms
  decisions   POST http://127.0.0.1:$(port_of decision-api)/v1/decisions     (Authorization: Bearer ${TALLY_API_TOKENS%%,*})
  control     GET  http://127.0.0.1:$(port_of decision-api)/v1/policies      (admin: Bearer $TALLY_ADMIN_TOKEN)
  usage/audit GET  http://127.0.0.1:$(port_of projector)/v1/usage?tenant=acme&granularity=minute
  console     http://127.0.0.1:$(port_of projector)/console   (sign in with a caller token and the admin token)
  health      http://127.0.0.1:{$(port_of decision-api),$(port_of relay),$(port_of projector)}/readyz   metrics: …/metrics
  policies    $TALLY_POLICIES (edit it: reloaded live)
  logs        $run/*.log          stop: ./dev stop
INFO
}

stop() {
  for app in "${apps[@]}"; do
    if alive "$app"; then
      local pid; pid=$(cat "$run/$app.pid")
      kill -TERM "$pid"
      for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; say "$app: killed (pid $pid)"; else say "$app: stopped (pid $pid)"; fi
    fi
    rm -f "$run/$app.pid"
  done
  if [ "${1:-}" != "--keep-stack" ]; then bash docker/local/stack.sh down; fi
}

status() {
  local rc=0
  for app in "${apps[@]}"; do
    if alive "$app"; then
      local ready; ready=$(curl -s "http://127.0.0.1:$(port_of "$app")/readyz" || echo unreachable)
      say "$app: running pid $(cat "$run/$app.pid") readyz=$ready"
    else
      say "$app: stopped"; rc=1
    fi
  done
  bash docker/local/stack.sh status || rc=1
  return $rc
}

case "${1:-}" in
  start) start ;;
  stop) shift; stop "$@" ;;
  status) status ;;
  *) echo "usage: services.sh start|stop [--keep-stack]|status" >&2; exit 2 ;;
esac
