// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * One-way imports (docs/architecture.md): each folder names the folders it must not import. The
 * durable core is layered runs → agent → events → store → persistence, each feature's controllers
 * beside its service (runs, sessions, tools, usage, models, agents); sse (the event-stream writer) sits
 * under runs and frontends; sessions, tools and llm sit beside the core; config, common, auth, http,
 * metrics, health and observability know none of them.
 */
const FEATURES = [
  'runs',
  'agent',
  'events',
  'store',
  'sessions',
  'tools',
  'llm',
  'mcp',
  'frontends',
  'sse',
  'usage',
  'models',
  'agents',
  'persistence',
];
const FORBIDDEN = {
  frontends: ['usage', 'models', 'agents'],
  runs: ['frontends', 'usage', 'models', 'agents'],
  agent: ['frontends', 'runs', 'sessions', 'sse', 'usage', 'models', 'agents'],
  sessions: ['frontends', 'runs', 'agent', 'events', 'sse', 'usage', 'models', 'agents'],
  sse: ['frontends', 'runs', 'agent', 'sessions', 'tools', 'mcp', 'llm', 'usage', 'models', 'agents'],
  usage: [
    'frontends',
    'runs',
    'agent',
    'sessions',
    'events',
    'sse',
    'tools',
    'llm',
    'mcp',
    'models',
    'agents',
  ],
  models: [
    'frontends',
    'runs',
    'agent',
    'sessions',
    'events',
    'sse',
    'store',
    'tools',
    'mcp',
    'usage',
    'agents',
  ],
  agents: ['frontends', 'runs', 'agent', 'sessions', 'events', 'sse', 'store', 'mcp', 'usage', 'models'],
  events: ['frontends', 'runs', 'agent', 'sessions', 'sse', 'tools', 'mcp', 'usage', 'models', 'agents'],
  store: [
    'frontends',
    'runs',
    'agent',
    'sessions',
    'events',
    'sse',
    'tools',
    'llm',
    'mcp',
    'usage',
    'models',
    'agents',
  ],
  tools: [
    'frontends',
    'runs',
    'agent',
    'sessions',
    'events',
    'sse',
    'store',
    'llm',
    'mcp',
    'usage',
    'models',
    'agents',
  ],
  mcp: [
    'frontends',
    'runs',
    'agent',
    'sessions',
    'events',
    'sse',
    'store',
    'llm',
    'usage',
    'models',
    'agents',
  ],
  llm: [
    'frontends',
    'runs',
    'agent',
    'sessions',
    'events',
    'sse',
    'store',
    'tools',
    'mcp',
    'usage',
    'models',
    'agents',
  ],
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
