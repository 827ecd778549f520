# syntax=docker/dockerfile:1
# One image for every role: the gateway, the worker, the migration runner and the operator
# CLI (docker-compose.yml runs them). Built once:  docker build -t gatehouse:0.1.0 .
# The suite runs on Node 20 (the oldest supported); the image uses the current LTS.
ARG NODE_IMAGE=node:22.11.0-bookworm-slim

# ---- build: every dependency, then `npm run build`'s service bundle (dist/)
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Install scripts stay off: nothing here needs one (native parts come prebuilt), and npm 10
# in this image does not read package.json's allowScripts.
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY build.mjs tsconfig.json ./
COPY server ./server
COPY gateway ./gateway
RUN node build.mjs

# ---- production dependencies only: no compiler, no test tools, no embedded database
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force

# ---- runtime
FROM ${NODE_IMAGE}
# NODE_COMPILE_CACHE (Node 22.1+): a restart reuses the compiled code of the first start
# instead of compiling the bundle again (not measurable on the Node 20 machines here).
# HOST: every interface of the container (outside production the service listens on loopback only).
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data \
    NODE_COMPILE_CACHE=/tmp/gatehouse-compile-cache
WORKDIR /app
# The data volume belongs to the user the service runs as, private to it (contract section 10).
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY package.json ./
USER node
VOLUME ["/data"]
EXPOSE 3000
# A gateway answers on PORT; a worker on HEALTH_PORT when set (docker-compose.yml sets it, and
# WORKER_METRICS_PORT to the same port: the worker's /metrics beside its health).
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 CMD ["node", "dist/healthcheck.js"]
# node itself is the main process, so SIGTERM reaches the service and it drains
# (SHUTDOWN_TIMEOUT, default 25 s: give the runtime's stop timeout a little more).
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js", "--role=all"]
