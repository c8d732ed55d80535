#!/usr/bin/env bash
# The flake hunt (docs/reliability.md): clones the committed main into a fresh
# directory and runs the whole test command RUNS times in a row, then the
# system and api-production projects PROJECT_RUNS times each; prints one line
# per run (passed, failed, seconds, the failing tests) and a summary.
#   RUNS=5 PROJECT_RUNS=10 ./scripts/flake-hunt.sh
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
PROJECT_RUNS=${PROJECT_RUNS:-10}
work=$(mktemp -d /tmp/logi-flake-hunt-XXXXXX)
trap 'rm -rf "$work"' EXIT
# Logs and reports of every run stay in this checkout's .tmp/ after the clone is removed.
out=$(pwd)/.tmp/flake-hunt-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
git clone -q . "$work/repo"
cp -r ../shared "$work/shared" 2>/dev/null || true
cd "$work/repo"
summary=()

report() { # $1 label, $2 report file, $3 seconds, $4 exit code
  node -e '
    const [label, file, seconds, code] = process.argv.slice(1);
    let r = { numPassedTests: 0, numFailedTests: 0, testResults: [] };
    try { r = JSON.parse(require("fs").readFileSync(file, "utf8")); } catch {}
    const failing = r.testResults.flatMap((f) => f.assertionResults.filter((a) => a.status === "failed").map((a) => `${f.name.split("/test/")[1]}: ${a.title}`));
    console.log(`${label}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${seconds} s, exit ${code}${failing.length ? "\n  " + failing.join("\n  ") : ""}`);
  ' "$1" "$2" "$3" "$4"
}

for i in $(seq 1 "$RUNS"); do
  start=$(date +%s)
  ./scripts/test.sh > "$out/full-$i.log" 2>&1; code=$?
  cp .tmp/vitest-report.json "$out/full-$i.json" 2>/dev/null
  line=$(report "full run $i" "$out/full-$i.json" $(( $(date +%s) - start )) $code); echo "$line"; summary+=("$line")
done
for project in system api-production; do
  for i in $(seq 1 "$PROJECT_RUNS"); do
    start=$(date +%s)
    pnpm -s exec vitest run --project "$project" --reporter=json --outputFile.json="$out/$project-$i.json" > "$out/$project-$i.log" 2>&1; code=$?
    line=$(report "$project run $i" "$out/$project-$i.json" $(( $(date +%s) - start )) $code); echo "$line"; summary+=("$line")
  done
done
echo "== flake hunt of $(git rev-parse --short HEAD)"
printf '%s\n' "${summary[@]}" | grep -c ' 0 failed, .* exit 0$' | xargs -I{} echo "{} of ${#summary[@]} runs without a failure"
