# A toolplane worker. Tools and manifest are the example's; mount or COPY your own and change CMD.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --omit=dev
COPY catalog ./catalog
COPY workflows ./workflows
COPY activities ./activities
COPY examples ./examples
COPY worker.ts client.ts tsconfig.json ./
RUN mkdir -p /data/stores && chown node:node /data/stores
USER node
CMD ["npx", "tsx", "worker.ts", "--manifest", "examples/support-desk/manifest.yaml", "--tools", "examples/support-desk/tools"]
