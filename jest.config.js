// Packages published as ES modules only, which jest's CommonJS loader needs transformed.
const ESM_ONLY = [
  'ai',
  'jose',
  '@ai-sdk',
  '@standard-schema',
  'eventsource-parser',
  '@workflow',
  '@ungap',
  'github-slugger',
];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: {
    '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }],
    // The AI SDK ships ES modules only; Node 20.19+ requires them natively, jest's loader needs them as CommonJS.
    '/node_modules/.+\\.js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
  // The examples import toolplane by its package name, as a consumer does; here that is the source.
  moduleNameMapper: {
    '^toolplane$': '<rootDir>/index.ts',
    '^toolplane/(workflow|client|ai-sdk)$': '<rootDir>/$1.ts',
    // The AI SDK imports a zod locale by its ES module file name; zod ships the same file as CommonJS.
    '^zod/v4/locales/(.*)\\.js$': '<rootDir>/node_modules/zod/v4/locales/$1.cjs',
  },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  // The cluster tests start their own cluster: `npm run test:cluster` (jest.cluster.config.js). The fault suites
  // (real process kills, the chaos campaign) and the packed-package test took 160 s of jest's 530 s on a near-quiet
  // two-core machine, so they run on their own: `npm run test:slow` (jest.slow.config.js); `.ci/run` runs all three.
  testPathIgnorePatterns: [
    '/node_modules/',
    '<rootDir>/test/cluster/',
    '<rootDir>/test/fault/',
    '<rootDir>/test/package/',
    // Two replicas on SeaweedFS, one killed mid-refund: a fault suite too, with a server of its own to start.
    '<rootDir>/test/sources/s3-blob-store.test.ts',
  ],
  setupFiles: ['<rootDir>/test/support/setup-runtime.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 180_000,
  // Two cores: one test file at a time keeps worker crashes and timings honest.
  maxWorkers: 1,
};
