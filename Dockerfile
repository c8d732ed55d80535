# syntax=docker/dockerfile:1
# One image for the API, the worker and the CLI, in two stages. `build` installs every
# dependency, compiles the TypeScript (`pnpm build`) and lays out the production tree with
# `pnpm deploy --prod`: the built packages and their production dependencies, nothing else.
# The runtime stage is that tree, Node, Chromium and fonts for every diacritic of cs, de, en,
# pl, ro and tr (from Debian; no browser is downloaded): no package manager, compiler, test
# or fixture. test/system/runtime-tree.test.ts replays the build stage and starts the API and
# a worker from the tree it makes.

FROM node:22-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@12.21.0
WORKDIR /build
# The manifests first: the install is cached until one of them changes.
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY patches patches/
COPY packages/domain/package.json packages/domain/
COPY packages/config/package.json packages/config/
COPY packages/adapters/package.json packages/adapters/
COPY packages/api/package.json packages/api/
COPY packages/worker/package.json packages/worker/
COPY packages/client/package.json packages/client/
COPY packages/service/package.json packages/service/
COPY test/package.json test/
RUN pnpm install --frozen-lockfile
COPY tsconfig.base.json tsconfig.build.json ./
COPY scripts/build.js scripts/copy-build-assets.js scripts/
COPY packages packages/
# The integrator's guides: the API serves them at /v1/guides (pnpm build copies them into packages/api/dist/guides).
COPY docs/integrate docs/integrate/
RUN pnpm build
RUN pnpm --filter @logi/service deploy --prod runtime

FROM node:22-bookworm-slim
# Chromium, fonts and tini; then the base image's npm, npx, corepack and yarn go: no package
# manager at run time.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-noto-core fonts-noto-color-emoji fonts-dejavu-core tini \
 && rm -rf /var/lib/apt/lists/* \
 && rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
# Owned by root: the service reads its code and never writes it.
COPY --from=build /build/runtime /app
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
# The API's /health/live on PORT; in a worker container, the worker's on METRICS_PORT.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 CMD ["node", "healthcheck.js"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "api.js"]
