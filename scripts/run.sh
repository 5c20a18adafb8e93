#!/usr/bin/env bash
# Runs a command with the project's Node 24 and local binaries first on PATH.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
exec "$@"
