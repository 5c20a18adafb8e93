#!/usr/bin/env bash
# `npm test`: type-check, lint, then every Jest project (unit + integration against real servers).
# Ends with the line `tests: N passed, M failed`.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"
bash scripts/setup.sh || exit 1

status=0
echo "== typecheck" >&2
tsc -p tsconfig.json || status=1
echo "== lint" >&2
# The module-boundary rule reads Nx's project graph; compute it first (no daemon, no cloud).
NX_DAEMON=false NX_NO_CLOUD=true nx show projects >/dev/null || status=1
eslint --max-warnings=0 . || status=1

echo "== jest" >&2
mkdir -p .capstan
results=.capstan/jest-results.json
rm -f "$results"
NODE_OPTIONS="--experimental-vm-modules --no-warnings=ExperimentalWarning" \
  jest --json --outputFile="$results" "$@" || status=1

node -e '
const fs = require("node:fs");
const file = process.argv[1];
if (!fs.existsSync(file)) { console.log("tests: 0 passed, 1 failed"); process.exit(0); }
const r = JSON.parse(fs.readFileSync(file, "utf8"));
const failed = r.numFailedTests + r.numRuntimeErrorTestSuites;
console.log(`tests: ${r.numPassedTests} passed, ${failed} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
' "$results"
exit $status
