/**
 * The cluster tests (`npm run test:cluster`): each file starts its own multi-service Temporal
 * cluster on PostgreSQL (scripts/cluster/), so there is no dev server and no global setup here.
 * `.ci/run` runs them after `npm test`.
 */
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: base.testEnvironment,
  transform: base.transform,
  transformIgnorePatterns: base.transformIgnorePatterns,
  moduleNameMapper: base.moduleNameMapper,
  setupFiles: base.setupFiles,
  testMatch: ['<rootDir>/test/cluster/**/*.test.ts'],
  testTimeout: 900_000,
  maxWorkers: 1,
};
