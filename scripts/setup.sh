#!/usr/bin/env bash
# Installs what the project needs on a fresh clone, and nothing twice: Node 24 (into .tools/), the npm
# packages, nats-server (Debian package) and the test environment's etcd, kube-apiserver and
# kube-controller-manager (built from the pinned Go modules under tools/ into ~/.cache/capstan, once per version);
# with --for-tests also what only the suites and benchmarks run.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"

stamp=node_modules/.capstan-install-stamp
if [ ! -f "$stamp" ] || [ package.json -nt "$stamp" ] || { [ -f package-lock.json ] && [ package-lock.json -nt "$stamp" ]; }; then
  echo "setup: installing npm packages" >&2
  npm install --no-audit --no-fund --loglevel=error >&2
  touch "$stamp"
fi

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing nats-server (Debian package)" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >&2
  else
    echo "setup: nats-server is missing. Install it (Debian: apt-get install nats-server) or set CAPSTAN_TEST_NATS_URL." >&2
    exit 1
  fi
fi

# The bootstrap data tests validate every rendered document with cloud-init's schema and shellcheck.
# cloud-init is only wanted as a validator: when setup installs it, it is kept from running at boot.
if ! command -v cloud-init >/dev/null 2>&1 || ! command -v shellcheck >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing cloud-init and shellcheck (Debian packages)" >&2
    command -v cloud-init >/dev/null 2>&1 || { mkdir -p /etc/cloud && touch /etc/cloud/cloud-init.disabled; }
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cloud-init shellcheck >&2
  else
    # Only the bootstrap tests need them (they fail saying so); the demo runs without.
    echo "setup: warning: cloud-init or shellcheck is missing; the bootstrap tests need both (Debian: apt-get install cloud-init shellcheck)." >&2
  fi
fi

# The deploy suites' real node, images and compose file (npm test): Debian's containerd, runc, CNI plugins, Docker
# engine and Compose.
if [ "${1:-}" = --for-tests ] && { ! command -v containerd >/dev/null 2>&1 || ! command -v runc >/dev/null 2>&1 \
  || [ ! -x /usr/lib/cni/bridge ] || ! command -v dockerd >/dev/null 2>&1 || ! command -v iptables >/dev/null 2>&1 \
  || ! command -v docker-compose >/dev/null 2>&1; }; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing containerd, runc, containernetworking-plugins, docker.io, docker-compose, iptables (Debian packages)" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq containerd runc \
      containernetworking-plugins docker.io docker-compose iptables iproute2 >&2
  else
    echo "setup: the deploy suites need root and Debian's containerd, runc, containernetworking-plugins, docker.io and docker-compose." >&2
    exit 1
  fi
fi

# The dashboard's browser tests (npm test): Debian's Chromium, driven by playwright-core (which downloads no browser).
if [ "${1:-}" = --for-tests ] && [ ! -x /usr/bin/chromium ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing chromium (Debian package)" >&2
    apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >&2
  else
    echo "setup: the dashboard's browser tests need Debian's chromium (apt-get install chromium)." >&2
    exit 1
  fi
fi

node scripts/build.mjs >&2
if [ -z "${CAPSTAN_TEST_KUBECONFIG:-}" ]; then
  node libs/testing/dist/cli.js binaries >&2
fi
# What only the suites and benchmarks need (`setup.sh --for-tests`): the other pinned kube-apiserver minors (in-place
# upgrades across minors) and upstream Cluster API (the compatibility suite, bench:upstream), each built once from the
# Go module proxy. The demo never runs them, so a fresh clone's first `npm run demo` does not wait for them.
if [ "${1:-}" = --for-tests ]; then
  if [ -z "${CAPSTAN_TEST_KUBECONFIG:-}" ]; then node libs/testing/dist/cli.js binaries --other-minors >&2; fi
  node libs/testing/dist/cli.js upstream-binaries >&2
  node libs/testing/dist/cli.js node-binaries >&2
fi
