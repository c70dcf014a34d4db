# Node 24: the current LTS (Node 20 reached its end of life in April 2026).
# Build stage: full dependencies, compile TypeScript.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json tsconfig.web.json nest-cli.json ./
COPY src ./src
COPY web ./web
COPY migrations ./migrations
COPY lua ./lua
RUN npm run build && npm prune --omit=dev

# Run stage: production dependencies and the compiled code only, as a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/lua ./lua
USER node
EXPOSE 3000
HEALTHCHECK --interval=5s --timeout=3s --retries=10 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# node directly (not npm) so SIGTERM reaches the service and it shuts down cleanly; with the
# heap settings of package.json's start (why: README, Memory).
CMD ["node", "--max-semi-space-size=8", "--heap-growing-percent=30", "--initial-old-space-size=128", "dist/src/main.js"]
