# One image per service, all from the workspace's compiled output:
#   docker build --build-arg APP=core -t ghcr.io/capstan-dev/core:0.1.0 .
# APP is one of core, cluster-provider, machine-provider, bootstrap-provider, control-plane-provider.
# The sim machine provider runs real etcd and kube-apiserver processes: built from the same pinned modules.
FROM golang:1.26-bookworm AS sim-binaries
WORKDIR /tools
COPY tools/ ./
RUN cd etcd && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/etcd . \
 && cd ../kube-apiserver && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o /out/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver

FROM node:24-bookworm-slim AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund && node scripts/build.mjs && npm prune --omit=dev

FROM node:24-bookworm-slim
ARG APP
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/libs ./libs
COPY --from=build /src/apps/${APP}/package.json ./apps/${APP}/
COPY --from=build /src/apps/${APP}/dist ./apps/${APP}/dist
# The sim machine provider runs a node agent per machine (docs/node-agent.md); on a real host it is installed by
# the bootstrap data. The image holds one kube-apiserver minor: plans that install another need it on PATH.
COPY --from=build /src/apps/node-agent/package.json ./apps/node-agent/
COPY --from=build /src/apps/node-agent/dist ./apps/node-agent/dist
COPY --from=sim-binaries /out/ /usr/local/bin/
ENV APP=${APP}
# Two glibc malloc arenas, not 8 per core: less RSS for a Node process (libs/testing SERVICE_ENV, docs/performance.md).
ENV MALLOC_ARENA_MAX=2
USER 65532:65532
# CAPSTAN_NODE_FLAGS: V8 flags for node's command line (deploy/ sets them; NODE_OPTIONS refuses most V8 flags).
ENTRYPOINT ["sh", "-c", "exec node $CAPSTAN_NODE_FLAGS apps/$APP/dist/main.js \"$@\"", "--"]
