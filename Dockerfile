# syntax=docker/dockerfile:1
# Switchyard's container image (README "Production install"). Three stages: the build (every dependency,
# `npm run build`), the production dependencies (`npm ci --omit=dev`, native modules built for this
# image), and the image itself: node_modules without development dependencies, dist/, a non-root user,
# and node as PID 1 receiving SIGTERM (the drain). test/deploy/production-install.test.ts runs the same
# production steps outside Docker.
ARG NODE_IMAGE=node:22-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary fits.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY scripts ./scripts
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
COPY scripts ./scripts
# No TypeScript here: the `prepare` step sees no build tools and skips the build (scripts/prepare.mjs).
RUN npm ci --omit=dev --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/switchyard \
    DRAIN_DELAY_SECONDS=5 \
    MALLOC_TRIM_THRESHOLD_=131072 \
    MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY --from=production-dependencies /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The image's own user `node` (uid 1000) owns the data directory and nothing else.
RUN mkdir -p /var/lib/switchyard && chown node:node /var/lib/switchyard
USER node
VOLUME /var/lib/switchyard
EXPOSE 8080
# Liveness: /healthz answers while the process serves (/readyz is for the balancer: it answers 503 during
# a drain and when a shared dependency is down, which is no reason to restart the container).
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
# node itself is PID 1 (exec form, no shell, no npm): `docker stop` sends it SIGTERM and it drains
# (DRAIN_DELAY_SECONDS, then in-flight requests); give `docker stop -t` / stop_grace_period 30 s.
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "dist/src/main.js", "serve"]
