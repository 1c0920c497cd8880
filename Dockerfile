# toolplane's worker and CLI: the package built from this repository (`npm pack`) installed into a
# clean image, serving the example's manifest and tools. For your own deployment, install toolplane
# in your image and run `toolplane worker` with your manifest and tools.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm pack --silent && mv toolplane-*.tgz /toolplane.tgz

FROM node:20-bookworm-slim
WORKDIR /app
COPY --from=build /toolplane.tgz /tmp/toolplane.tgz
# The package (lib/, its bin `toolplane`) and tsx, which loads the example's TypeScript tools.
RUN npm init -y >/dev/null \
  && npm install --omit=dev --no-audit --no-fund /tmp/toolplane.tgz tsx@4.23.15 \
  && rm /tmp/toolplane.tgz
COPY examples/support-desk ./examples/support-desk
ENV NODE_ENV=production \
  NODE_OPTIONS="--import tsx" \
  PATH="/app/node_modules/.bin:${PATH}" \
  TOOLPLANE_DATA_DIR=/data \
  TOOLPLANE_STORE_DIR=/data/stores
# A named volume mounted at /data starts as a copy of this folder: owned by `node`, shared by replicas.
RUN mkdir -p /data/stores && chown -R node:node /data
USER node
ENTRYPOINT ["toolplane"]
CMD ["worker", "--manifest", "examples/support-desk/manifest.yaml", "--tools", "examples/support-desk/tools"]
