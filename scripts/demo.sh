#!/usr/bin/env bash
# `npm run demo [-- --once]`: installs what it needs, then provisions a sim cluster end to end.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"
bash scripts/setup.sh
exec node apps/cli/dist/demo/run-demo.js "$@"
