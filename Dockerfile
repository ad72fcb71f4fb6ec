# The HTTP service in a container: the built bundle (dist/) and its production dependencies (undici;
# pg, for a ledger in PostgreSQL), run as the unprivileged `node` user. Build from a clone:
#   docker build -t gateway-tools-mcp .
# Run (a token is required: the server refuses to listen off loopback without one):
#   docker run -e GATEWAY_MCP_TOKEN=... -e GATEWAY_BASE_URL=... -e GATEWAY_API_KEY=... \
#     -p 127.0.0.1:8080:8080 gateway-tools-mcp

# Node 26, the active LTS (the package supports Node 22.13 and later).
FROM node:26-alpine AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

FROM node:26-alpine
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# Saved files (speech, transcripts, videos) and readable inputs live under /data.
RUN mkdir /data && chown node:node /data
VOLUME ["/data"]
WORKDIR /data
USER node
ENV GATEWAY_TRANSPORT=http \
    GATEWAY_HOST=0.0.0.0 \
    GATEWAY_PORT=8080
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.GATEWAY_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["node", "/app/dist/cli.js"]
