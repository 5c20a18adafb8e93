#!/usr/bin/env bash
# `npm test`: type-check, lint, then every Jest project (unit + integration against real servers).
# Ends with the line `tests: N passed, M failed`.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"
bash scripts/setup.sh --for-tests || exit 1

status=0
echo "== typecheck" >&2
tsc -p tsconfig.json || status=1
echo "== lint" >&2
# The module-boundary rule reads Nx's project graph; compute it first (no daemon, no cloud).
NX_DAEMON=false NX_NO_CLOUD=true nx show projects >/dev/null || status=1
eslint --max-warnings=0 . || status=1

echo "== jest" >&2
# Two workers for every file but the few that rewrite the test API server's shared definitions; those run after, one at
# a time (SERIAL_TEST_FILES in jest.config.js). Each phase starts its own test environment.
mkdir -p .capstan
rm -f .capstan/jest-results-*.json
for phase in parallel serial; do
  echo "== jest: $phase files" >&2
  workers=(--maxWorkers=2)
  [ "$phase" = serial ] && workers=(--runInBand)
  CAPSTAN_JEST_PHASE=$phase NODE_OPTIONS="--experimental-vm-modules --no-warnings=ExperimentalWarning" \
    jest "${workers[@]}" --passWithNoTests --json --outputFile=".capstan/jest-results-$phase.json" "$@" || status=1
done

node -e '
const fs = require("node:fs");
let passed = 0, failed = 0, skipped = 0;
for (const file of process.argv.slice(1)) {
  if (!fs.existsSync(file)) { failed += 1; continue; }
  const r = JSON.parse(fs.readFileSync(file, "utf8"));
  passed += r.numPassedTests;
  failed += r.numFailedTests + r.numRuntimeErrorTestSuites;
  skipped += r.numPendingTests;
}
console.log(`tests: ${passed} passed, ${failed} failed` + (skipped ? `, ${skipped} skipped` : ""));
' .capstan/jest-results-parallel.json .capstan/jest-results-serial.json
exit $status
