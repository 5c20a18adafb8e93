# One image per service, built from a staged context (not the repository root) and pulling nothing:
#   npm run images
# stages .capstan/image-context (libs/testing/src/images/build-context.ts; this file is copied in as its Dockerfile),
# builds the base image capstan.dev/base:local FROM scratch (deploy/images/base.Dockerfile) and then, for APP in core,
# cluster-provider, bootstrap-provider, control-plane-provider, dashboard:
#   docker build --target service --build-arg APP=core -t ghcr.io/capstan-dev/core:0.1.0 .capstan/image-context
# and for the machine provider, whose sim runs real etcd, kube-apiserver, kube-controller-manager and kube-scheduler:
#   docker build --target machine-provider --build-arg APP=machine-provider \
#     -t ghcr.io/capstan-dev/machine-provider:0.1.0 .capstan/image-context
# Where a registry is reachable, any Node 24 image with sh can be the base instead:
#   --build-arg BASE=node:24-bookworm-slim
#
# Each part is a tar the staging wrote reproducibly (sorted, mtime 0, owner root, /app's own entry included), which ADD
# unpacks: the same workspace gives the same layer digests on any engine (COPY would stamp /app with the build time),
# and the context is a dozen files (the classic builder unpacks all of it for every build).
ARG BASE=capstan.dev/base:local

FROM ${BASE} AS service
# /app/node_modules: production packages only (types, source maps and docs pruned), the same in all six images, so
# one layer is shared.
ADD node_modules.tar /
# /app/package.json; /app/tools/<module>/go.mod, by which repoRoot() finds the install and the sim reads the pinned
# versions; /app/libs/<lib>/{package.json,dist} (and what a library reads at run time: libs/cluster-templates/templates);
# /app/apps/node-agent: the sim machine provider runs a node agent per machine (docs/node-agent.md), on a real host the
# bootstrap data installs it.
ADD workspace.tar /
ARG APP
# /app/apps/${APP}/{package.json,dist}, and the folders the app reads at run time: the dashboard's page, script and
# style in /app/apps/dashboard/web (build-context.ts RUNTIME_ASSETS).
ADD apps/${APP}.tar /
WORKDIR /app
ENV APP=${APP}
# Two glibc malloc arenas, not 8 per core: less RSS for a Node process (libs/testing SERVICE_ENV, docs/performance.md).
ENV MALLOC_ARENA_MAX=2
USER 65532:65532
# CAPSTAN_NODE_FLAGS: V8 flags for node's command line (deploy/ sets them; NODE_OPTIONS refuses most V8 flags).
ENTRYPOINT ["sh", "-c", "exec node $CAPSTAN_NODE_FLAGS apps/$APP/dist/main.js \"$@\"", "--"]

# The sim's binaries in the binary cache's layout, where libs/testing/src/binaries.ts looks for them by version:
# /opt/capstan-cache/capstan/bin/<name>/<version>/<name> for etcd, kube-scheduler, kube-controller-manager and
# kube-apiserver of every pinned minor that was built.
FROM service AS machine-provider
ENV XDG_CACHE_HOME=/opt/capstan-cache
ADD go-cache/etcd.tar /
ADD go-cache/kube-scheduler.tar /
ADD go-cache/kube-controller-manager.tar /
ADD go-cache/kube-apiserver.tar /
