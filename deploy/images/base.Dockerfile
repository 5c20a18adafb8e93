# The base of Capstan's service images, built FROM scratch so nothing is pulled: the root filesystem is the tar that
# libs/testing/src/images/base-rootfs.ts writes (Debian's libc6, libgcc-s1, libstdc++6 and dash at the host's exact
# versions, and the project's Node 24 as /usr/local/bin/node). `npm run images` builds it as
# capstan.dev/base:<node version>-<first 12 hex of the tar's sha256>, also tagged capstan.dev/base:local; by hand:
#   docker build -f deploy/images/base.Dockerfile -t capstan.dev/base:local ~/.cache/capstan/images/base
FROM scratch
ADD rootfs.tar /
ARG NODE_VERSION=unknown
ARG NODE_STRIPPED=unknown
ARG DEBIAN_PACKAGES=unknown
ARG ROOTFS_SHA256=unknown
LABEL dev.capstan.base.node-version=${NODE_VERSION} \
      dev.capstan.base.node-stripped=${NODE_STRIPPED} \
      dev.capstan.base.debian-packages="${DEBIAN_PACKAGES}" \
      dev.capstan.base.rootfs-sha256=${ROOTFS_SHA256}
# An image without PATH gets the engine's default under Docker but not under every CRI runtime: set it.
ENV PATH=/usr/local/bin:/usr/bin:/bin
