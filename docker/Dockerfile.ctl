# syntax=docker/dockerfile:1
# platformctl in a container: the publish runner of plugin supervisors (README "Plugins").
#   docker build -f docker/Dockerfile.ctl -t platform-ctl .
#   docker run --rm -e PLATFORM_ENDPOINT=... -e PLATFORM_DOMAIN_ID=... -e PLATFORM_USER_ID=... -e PLATFORM_PASSWORD=... \
#     -e PLATFORM_SUPERVISOR_SECRET=... -e PLUGINS='ID@VERSION=grpc://host:port ...' platform-ctl publish-plugins --name N --hostname H
# `platformctl <command>` runs any other command. Runs as the non-root `node` user, its session in /tmp.

FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN node --input-type=module -e "const { bundle } = await import('./tools/build/bundle.mjs'); await bundle({ entryPoints: ['tools/ctl/src/cli.ts'], outfile: 'dist/tools/ctl/cli.js' });"

FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# platformctl prints YAML: `yaml` is a dev dependency of the repository, added here at the locked version.
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && npm install --no-save --omit=dev --ignore-scripts --no-audit --no-fund "yaml@$(node -p "require('./package-lock.json').packages['node_modules/yaml'].version")" \
 && npm cache clean --force

FROM node:20-bookworm-slim
ENV NODE_ENV=production PLATFORM_CONFIG_DIR=/tmp/platformctl
WORKDIR /app
COPY --from=deps --chown=root:root /app/node_modules ./node_modules
COPY --chown=root:root package.json ./
COPY --from=build --chown=root:root /src/dist/tools/ctl/ ./dist/tools/ctl/
COPY --chown=root:root --chmod=755 docker/publish-plugins.sh /usr/local/bin/publish-plugins
RUN printf '#!/bin/sh\nexec node --enable-source-maps /app/dist/tools/ctl/cli.js "$@"\n' > /usr/local/bin/platformctl && chmod 755 /usr/local/bin/platformctl
USER node
ENTRYPOINT []
CMD ["platformctl", "--help"]
