# syntax=docker/dockerfile:1

# --- build: every dependency, compile TypeScript to dist/ ---
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# npm install, not npm ci: npm 11 leaves other platforms' optional native bindings out of the lock
# file, which npm ci refuses; install still takes every locked version.
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY scripts ./scripts
COPY src ./src
COPY web ./web
RUN npm run build

# --- runtime: production dependencies and the compiled app only, as the unprivileged node user ---
FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    WORKSPACE_ROOT=/workspace \
    DATA_DIR=/data
WORKDIR /app
# bubblewrap is run_command's sandbox (prlimit, for its per-process limits, is in util-linux, already here).
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
# --omit=optional leaves out the embedded PostgreSQL (~100 MB): the container always has DATABASE_URL.
RUN npm install --omit=dev --omit=optional --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The workspace is the tools' sandbox and /data the embedded database's (used without DATABASE_URL).
RUN mkdir -p /workspace /data && chown node:node /workspace /data
USER node
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# Exec form: node itself is PID 1 and gets the SIGTERM, on which main.ts drains runs before exiting.
CMD ["node", "dist/main.js"]
