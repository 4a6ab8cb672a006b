// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * One-way imports (docs/architecture.md): each feature folder names the feature folders it may
 * import; any other is refused. The durable core is layered runs → agent → events → store →
 * persistence, each feature's controllers beside its service; sse (the event-stream writer) sits
 * under runs and frontends; sessions, tools and llm sit beside the core; the features built on runs
 * (frontends, forks, schedules) sit above them. config, common, auth, http, metrics, health and
 * observability may be imported by all and import none of them.
 */
const MAY_IMPORT = {
  frontends: ['runs', 'sessions', 'events', 'sse', 'store', 'persistence', 'files'],
  forks: ['runs', 'sessions', 'store', 'llm', 'persistence'],
  schedules: ['runs', 'sessions', 'store'],
  webhooks: ['store', 'persistence'],
  commands: ['sessions', 'store', 'tools'],
  files: ['store', 'persistence', 'llm'],
  agents: ['sessions', 'tools', 'llm', 'store', 'persistence'],
  runs: ['agent', 'events', 'llm', 'sessions', 'sse', 'store', 'tools', 'persistence', 'files', 'agents'],
  sessions: ['llm', 'store', 'tools', 'persistence', 'files'],
  usage: ['store'],
  models: ['llm'],
  agent: ['events', 'llm', 'store', 'tools', 'persistence'],
  events: ['llm', 'store', 'persistence'],
  sse: ['events', 'store'],
  store: ['persistence'],
  tools: ['persistence'],
  mcp: ['tools'],
  llm: [],
  persistence: [],
};
const FEATURES = Object.keys(MAY_IMPORT);
const FORBIDDEN = {
  ...Object.fromEntries(
    Object.entries(MAY_IMPORT).map(([folder, allowed]) => [
      folder,
      FEATURES.filter((f) => f !== folder && !allowed.includes(f)),
    ]),
  ),
  ...Object.fromEntries(
    ['config', 'common', 'auth', 'http', 'metrics', 'health', 'observability'].map((f) => [f, FEATURES]),
  ),
};
const boundaries = Object.entries(FORBIDDEN).map(([folder, banned]) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: banned.map((b) => ({
          regex: `^(\\.\\./)+${b}(/|$)`,
          message: `src/${folder} must not import src/${b}: imports run one way (docs/architecture.md).`,
        })),
      },
    ],
  },
}));

export default tseslint.config(
  {
    ignores: [
      'dist/',
      'node_modules/',
      '.tools/',
      '.data/',
      'workspace/',
      'coverage/',
      'test-artifacts/',
      'test/platform/typed-client/',
      '**/*.mjs',
      '**/*.js',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/require-await': 'off',
    },
  },
  ...boundaries,
  {
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
