#!/usr/bin/env bash
# Installs what the tests need, starts what is not running, and runs every test:
# type check, layer rules, lint, format check, OpenAPI lint (Spectral), build, compose file check, domain, adapters (SQLite, MariaDB, Redis, S3 server),
# PDFs (Chromium), API over HTTP in both profiles.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

ensure_node
ensure_pnpm
ensure_system_packages poppler-utils libxml2-utils docker-compose
ensure_redis
ensure_mariadb
install_dependencies

log "type check"
pnpm -s typecheck

log "layer rules (dependency-cruiser)"
pnpm -s deps:check

log "lint (ESLint, type-aware)"
pnpm -s lint

log "format check (Prettier)"
pnpm -s format:check

log "OpenAPI document lint (Spectral: spectral:oas and OWASP API Security, .spectral.yaml)"
pnpm -s openapi:lint

log "build (what pnpm start, pnpm worker and pnpm cli run)"
pnpm -s build

log "docker-compose.yml check"
# The services read their credentials from compose.env, which is the operator's (git ignores it):
# a checkout without one is checked with a copy of compose.env.example, removed afterwards.
if [ -f docker-compose.yml ]; then
  if [ -f compose.env ]; then
    docker-compose -f docker-compose.yml config -q
  else
    cp compose.env.example compose.env
    status=0
    docker-compose -f docker-compose.yml config -q || status=$?
    rm -f compose.env
    [ "$status" -eq 0 ]
  fi
fi

log "tests"
mkdir -p .tmp
report=.tmp/vitest-report.json
rm -f "$report"
status=0
pnpm -s exec vitest run --reporter=default --reporter=json --outputFile.json="$report" "$@" || status=$?

# A plain closing line, so that a run that executed no test can be told from one that passed.
if [ -f "$report" ]; then
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const skipped = r.numPendingTests + r.numTodoTests;
    console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
    if (r.numTotalTests === 0) process.exit(1);
  ' "$report" || status=1
else
  echo "0 passed, 1 failed"
  status=1
fi
# Vitest fails a run whose tests all passed when an error escaped them (an unhandled rejection).
if [ "$status" -ne 0 ]; then echo "the test command failed (exit $status): see the errors above"; fi
exit $status
