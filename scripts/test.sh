#!/usr/bin/env bash
# Installs what the tests need, starts what is not running, and runs every test:
# type check, layer rules, lint, format check, OpenAPI lint (Spectral), build, compose file check, domain, adapters (SQLite, MariaDB, Redis, S3 server),
# PDFs (Chromium), API over HTTP in both profiles; then the image: the Dockerfile built with Podman and
# docker-compose.yml run on it (test/system/compose/run.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/setup.sh

ensure_node
ensure_pnpm
ensure_system_packages poppler-utils libxml2-utils docker-compose prometheus "${IMAGE_TEST_PACKAGES[@]}"
ensure_redis
ensure_mariadb
install_dependencies

# The image step's base image (Debian by debootstrap, Node from npm: mostly downloads, a few minutes
# on a machine that has none) is made in the background while the checks below run; the image step
# after the tests waits for it. A run of named test files has no image step.
image_base=
if [ $# -eq 0 ]; then
  log "image: the base image, in the background (test/system/compose/base-image.sh)"
  mkdir -p .tmp
  bash test/system/compose/base-image.sh >.tmp/image-base.log 2>&1 &
  image_base=$!
  trap '[ -z "$image_base" ] || kill "$image_base" 2>/dev/null || true' EXIT
fi

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
reports=("$report")

# The image, after the other tests so that its build and containers have the machine to themselves
# (figures: docs/benchmarks.md). A run of named test files leaves it out.
if [ $# -eq 0 ]; then
  log "image: the Dockerfile built with Podman, docker-compose.yml run on it (test/system/compose/run.sh)"
  # A failed base is made again by run.sh, which stops the step if it fails again.
  wait "$image_base" || sed 's/^/    /' .tmp/image-base.log >&2
  image_base=
  image_report=.tmp/image-test-report.json
  rm -f "$image_report"
  bash test/system/compose/run.sh --reporter=default --reporter=json --outputFile.json="$image_report" || status=1
  reports+=("$image_report")
else
  log "image: left out of a run of named tests (bash test/system/compose/run.sh runs it)"
fi

# A plain closing line, so that a run that executed no test can be told from one that passed.
node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0, ok = true;
  for (const file of process.argv.slice(1)) {
    // A step that wrote no report (it failed before its tests ran) counts as one failed test.
    if (!fs.existsSync(file)) { failed += 1; ok = false; continue; }
    const r = JSON.parse(fs.readFileSync(file, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests;
    if (r.numTotalTests === 0) ok = false;
  }
  console.log(`${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
  if (!ok) process.exit(1);
' "${reports[@]}" || status=1
# Vitest fails a run whose tests all passed when an error escaped them (an unhandled rejection).
if [ "$status" -ne 0 ]; then echo "the test command failed (exit $status): see the errors above"; fi
exit $status
