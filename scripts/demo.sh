#!/usr/bin/env bash
# Quick start: installs what is missing, loads the demo data into the embedded
# profile (SQLite, local files, in-process jobs) and starts the API.
# PORT (default 3000) and METRICS_PORT (default 9464, 0 turns metrics off) pick the ports,
# HOST and METRICS_HOST the addresses (default 127.0.0.1); DATA_DIR the data (default ./data).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh
source scripts/lib/demo-examples.sh

host=${HOST:-127.0.0.1}
port=${PORT:-3000}
metrics_port=${METRICS_PORT:-9464}

# A taken port would stop the API only after the install: say so now, with the way out.
check_port_free() {
  local name=$1 value=$2 address
  address=$(demo_url_host "$3")
  address=${address#[}
  address=${address%]}
  if port_open "$address" "$value"; then
    log "port $value ($name) is in use on $address; pick another, e.g. $name=$((value + 100)) ./scripts/demo.sh${4:+ $4}"
    exit 1
  fi
}
check_port_free PORT "$port" "$host"
if [ "$metrics_port" != 0 ]; then check_port_free METRICS_PORT "$metrics_port" "${METRICS_HOST:-127.0.0.1}" "(or METRICS_PORT=0: no metrics)"; fi

ensure_node
ensure_pnpm
ensure_system_packages
install_dependencies

log "building (pnpm build)"
pnpm -s build

log "loading demo data"
pnpm -s cli fixtures:load fixtures/demo.json

echo
echo "Demo data loaded."
print_demo_examples
metrics="metrics on http://$(demo_url_host "${METRICS_HOST:-127.0.0.1}"):$metrics_port/metrics"
[ "$metrics_port" != 0 ] || metrics="metrics off (METRICS_PORT=0)"
cat <<MSG

Starting the API on http://$(demo_url_host "$host"):$port, $metrics (Ctrl+C stops it).
Other ports: PORT=3100 METRICS_PORT=9465 ./scripts/demo.sh
MSG
exec pnpm -s start
