// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * One-way imports (docs/architecture.md): each folder names the folders it must not import. The
 * durable core is layered chat → runs → agent → events → store → persistence; sessions, tools and
 * llm sit beside it; config, common, auth, http, metrics, health and observability know none of them.
 */
const FEATURES = [
  'chat',
  'runs',
  'agent',
  'events',
  'store',
  'sessions',
  'tools',
  'llm',
  'mcp',
  'frontends',
  'persistence',
];
const FORBIDDEN = {
  runs: ['chat', 'frontends'],
  agent: ['chat', 'frontends', 'runs', 'sessions'],
  sessions: ['chat', 'frontends', 'runs', 'agent', 'events'],
  events: ['chat', 'frontends', 'runs', 'agent', 'sessions', 'tools', 'mcp'],
  store: ['chat', 'frontends', 'runs', 'agent', 'sessions', 'events', 'tools', 'llm', 'mcp'],
  tools: ['chat', 'frontends', 'runs', 'agent', 'sessions', 'events', 'store', 'llm', 'mcp'],
  mcp: ['chat', 'frontends', 'runs', 'agent', 'sessions', 'events', 'store', 'llm'],
  llm: ['chat', 'frontends', 'runs', 'agent', 'sessions', 'events', 'store', 'tools', 'mcp'],
  persistence: FEATURES.filter((f) => f !== 'persistence'),
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
