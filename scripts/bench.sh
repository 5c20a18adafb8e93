#!/usr/bin/env bash
# `npm run bench:<name>`: builds, then runs one benchmark (a compiled file under some project's dist/bench/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"
bash scripts/setup.sh --for-tests
exec node --expose-gc "$@"
