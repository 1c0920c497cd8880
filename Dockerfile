# A toolplane worker: the package built from this repository, serving the example's manifest and
# tools. For your own deployment, install toolplane in your image and run your own worker.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
# Dev dependencies too: the example's tools are TypeScript, loaded through tsx.
RUN npm ci
COPY tsconfig.json tsconfig.build.json index.ts workflow.ts client.ts cli.ts worker.ts plugin.ts ./
COPY catalog ./catalog
COPY common ./common
COPY workflows ./workflows
COPY activities ./activities
COPY inspect ./inspect
COPY scripts ./scripts
COPY examples ./examples
RUN npm run build
ENV NODE_ENV=production TOOLPLANE_DATA_DIR=/data
RUN mkdir -p /data/stores && chown -R node:node /data
USER node
CMD ["npx", "tsx", "worker.ts", "--manifest", "examples/support-desk/manifest.yaml", "--tools", "examples/support-desk/tools"]
