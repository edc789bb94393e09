# Confab in a container. UNTESTED: no container engine runs where Confab is developed; the same
# steps (build, npm prune --omit=dev, node dist/src/main.js) are tested outside a container. See
# docs/operations.md "Docker".
#
#   docker build -t confab .
#   docker run -d -p 9991:9991 -v confab-data:/data \
#     -e EXTERNAL_HOST=chat.example.com -e EXTERNAL_SCHEME=https confab
#   docker exec confab node dist/src/manage.js list-realms

FROM node:20-bookworm AS build
WORKDIR /app
# better-sqlite3 compiles from source at install.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY scripts ./scripts
# npm ci runs `prepare`, which needs the sources to build: install without scripts first...
RUN npm ci --ignore-scripts && npm rebuild better-sqlite3
COPY tsconfig.json ./
COPY src ./src
COPY actors ./actors
COPY workers ./workers
COPY bench ./bench
COPY test ./test
# ...then build dist/ once and drop the dev dependencies.
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=9991 DATA_DIR=/data LOG_FORMAT=json
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY docs ./docs
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 9991
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:' + (process.env.PORT || 9991) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"
STOPSIGNAL SIGTERM
CMD ["node", "dist/src/main.js"]
