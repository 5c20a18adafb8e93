#!/usr/bin/env bash
# `npm run demo [-- --once] [-- --node]`: installs what it needs, then provisions a sim cluster end to end. --node runs
# Capstan as pods on a real node (docs/deploy.md), which needs what the suites need (root, containerd, Docker).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"
case " $* " in
  *" --node "*) bash scripts/setup.sh --for-tests ;;
  *) bash scripts/setup.sh ;;
esac
exec node apps/cli/dist/demo/run-demo.js "$@"
