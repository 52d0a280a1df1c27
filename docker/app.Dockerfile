# syntax=docker/dockerfile:1
# One image recipe for the three services. Build from the repository root:
#   docker build -f docker/app.Dockerfile --build-arg APP=relay -t tally-relay .
# APP (decision-api | relay | projector) picks the entry point; `-e APP=…` overrides it at run time.
# (Not TALLY_APP: the configuration lib rejects unknown TALLY_* variables at boot.)

FROM node:24-slim AS build
WORKDIR /app
# Manifests first so the dependency layer is reused until package-lock.json changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY scripts ./scripts
COPY apps ./apps
COPY libs ./libs
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:24-slim AS runtime
ARG APP=decision-api
# jemalloc: the decision API's primary preloads it into its workers (libs/cluster/src/cluster.runtime.ts),
# which hands freed memory back to the system where glibc's malloc keeps it.
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    APP=${APP} \
    TALLY_HOST=0.0.0.0
WORKDIR /app
COPY --from=build --chown=node:node /app/package.json ./
COPY --from=build --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
USER node
# `exec` makes node PID 1, so `docker stop`'s SIGTERM reaches the app's shutdown hooks directly.
CMD ["sh", "-c", "exec node dist/apps/${APP}/src/main.js"]
