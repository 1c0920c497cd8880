// The gate's unit tests (test/gate/): pure workflow-safe code, judged with no Temporal server, no worker
// and no client, so they run without the global dev server: `npm run test:gate`. The main config runs them too.
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: ['<rootDir>/test/gate/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  setupFiles: [],
  globalSetup: undefined,
  globalTeardown: undefined,
};
