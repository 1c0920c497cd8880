/**
 * The slow suites (`npm run test:slow`): test/fault/ (worker processes SIGKILLed mid-call, the chaos campaign,
 * deadlines, the store lock, worker lifecycle, budgets across a killed worker), test/package/ (build, pack, install
 * into a fresh project) and the S3 blob store on SeaweedFS (a replica killed mid-refund).
 * Same dev server and global setup as `npm test`, which leaves them out to stay quick; `.ci/run` runs both.
 */
const base = require('./jest.config.js');

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  testMatch: [
    '<rootDir>/test/fault/**/*.test.ts',
    '<rootDir>/test/package/**/*.test.ts',
    '<rootDir>/test/sources/s3-blob-store.test.ts',
  ],
  testPathIgnorePatterns: ['/node_modules/'],
};
