# syntax=docker/dockerfile:1
# One image for the API, the worker and the CLI. Chromium and fonts for every
# diacritic of cs, de, en, pl, ro and tr come from Debian; no browser is downloaded.

FROM node:22-bookworm-slim AS deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@12.21.0
WORKDIR /app
COPY package.json pnpm-lock.yaml pnpm-workspace.yaml .npmrc ./
COPY patches patches/
COPY packages/domain/package.json packages/domain/
COPY packages/adapters/package.json packages/adapters/
COPY packages/api/package.json packages/api/
COPY packages/worker/package.json packages/worker/
COPY packages/client/package.json packages/client/
COPY test/package.json test/
RUN pnpm install --frozen-lockfile

FROM node:22-bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium fonts-noto-core fonts-dejavu-core tini \
 && rm -rf /var/lib/apt/lists/*
RUN npm install -g pnpm@12.21.0
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
COPY --from=deps /app /app
COPY . .
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 3000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["pnpm", "start"]
