/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest', { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' } }] },
  // The examples import toolplane by its package name, as a consumer does; here that is the source.
  moduleNameMapper: { '^toolplane$': '<rootDir>/index.ts', '^toolplane/(workflow|client)$': '<rootDir>/$1.ts' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  setupFiles: ['<rootDir>/test/support/setup-runtime.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 180_000,
  // Two cores: one test file at a time keeps worker crashes and timings honest.
  maxWorkers: 1,
};
