/** Three tiers, one runner: unit tests beside nothing but fakes, integration and end-to-end tests on a
 * real embedded PostgreSQL started once by the global setup (each suite gets its own database). */
module.exports = {
  rootDir: '.',
  testEnvironment: 'node',
  testMatch: ['<rootDir>/test/**/*.spec.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.json' }] },
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  maxWorkers: 2,
  testTimeout: 30000,
  forceExit: false,
};
