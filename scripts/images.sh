#!/usr/bin/env bash
# `npm run images`: builds the five service images (ghcr.io/capstan-dev/<service>:0.1.0) on this machine, pulling
# nothing: the base image FROM scratch from Debian packages and the project's Node 24, the services from a staged
# build context (Dockerfile). Uses the Docker engine on DOCKER_HOST, else starts the project's own dockerd (kept
# running as a layer cache; ~/.cache/capstan/docker). Prints each image's size and its layers over 50 MiB.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/node24.sh"
cd "$capstan_root"
# The compiled dist/ trees, the npm packages and the sim's Go binaries the images are made of.
bash scripts/setup.sh
exec node libs/testing/dist/cli.js images "$@"
