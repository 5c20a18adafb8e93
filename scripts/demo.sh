#!/usr/bin/env bash
# `npm run demo [-- --once]`: the local management environment, with nothing installed by hand.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"
bash scripts/setup.sh
exec node libs/testing/dist/demo.js "$@"
