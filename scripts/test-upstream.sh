#!/usr/bin/env bash
# `npm run test:upstream`: builds upstream Cluster API v1.14.2 once (tools/cluster-api, cached), then runs the
# compatibility suite (*.upstream.spec.ts) against the real test environment. Ends with `tests: N passed, M failed`.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root" || exit 1
bash scripts/setup.sh --for-tests || exit 1
mkdir -p .capstan
results=.capstan/jest-upstream-results.json
rm -f "$results"
status=0
NODE_OPTIONS="--experimental-vm-modules --no-warnings=ExperimentalWarning" \
  jest --selectProjects upstream --json --outputFile="$results" "$@" || status=1
node -e '
const fs = require("node:fs");
const file = process.argv[1];
if (!fs.existsSync(file)) { console.log("tests: 0 passed, 1 failed"); process.exit(0); }
const r = JSON.parse(fs.readFileSync(file, "utf8"));
console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests + r.numRuntimeErrorTestSuites} failed`);
' "$results"
exit $status
