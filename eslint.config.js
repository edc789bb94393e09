// Type-aware lint, plus the layer rules of the architecture (README "Architecture"):
// the linter enforces which module may import which, so the seams stay seams.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const layer = (files, patterns) => ({
  files,
  rules: { 'no-restricted-imports': ['error', { patterns }] },
});

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'data/**',
      '.cache/**',
      'eslint.config.js',
      'scripts/*.mjs',
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
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      '@typescript-eslint/switch-exhaustiveness-check': [
        'error',
        { considerDefaultExhaustiveForUnions: true },
      ],
      '@typescript-eslint/restrict-template-expressions': [
        'error',
        { allowNumber: true, allowBoolean: true },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      // tap collects top-level t.test() promises itself.
      '@typescript-eslint/no-floating-promises': 'off',
    },
  },
  // Only src/http/uws.ts touches uWebSockets.js.
  {
    files: ['**/*.ts'],
    ignores: ['src/http/uws.ts', 'bench/**'],
    rules: { 'no-restricted-imports': ['error', { paths: ['uWebSockets.js', 'uws-modern'] }] },
  },
  layer(
    ['src/lib/**/*.ts'],
    [
      {
        group: [
          '**/http/**',
          '**/endpoints/**',
          '**/mutations/**',
          '**/actors/**',
          '**/workers/**',
          '**/storage/**',
          '**/delivery/**',
        ],
        message: 'src/lib is pure: it imports nothing above it.',
      },
    ],
  ),
  layer(
    ['src/mutations/**/*.ts'],
    [
      {
        group: [
          '**/http/**',
          '**/endpoints/**',
          '**/actors/**',
          '**/workers/**',
          '**/delivery/**',
          'uWebSockets.js',
        ],
        message:
          'Mutations run inside the realm actor: no HTTP, no actors, no workers; they emit events, never deliver them.',
      },
    ],
  ),
  layer(
    ['src/queries/**/*.ts'],
    [
      {
        group: [
          '**/http/**',
          '**/endpoints/**',
          '**/mutations/**',
          '**/actors/**',
          'uWebSockets.js',
        ],
        message: 'Queries read; they never mutate or talk HTTP.',
      },
    ],
  ),
  layer(
    ['src/endpoints/**/*.ts'],
    [
      {
        group: ['**/storage/db.js', '**/storage/migrations/**', 'better-sqlite3', 'uWebSockets.js'],
        message: 'Endpoints never touch SQL or uWS directly.',
      },
    ],
  ),
  // Endpoints read through src/queries (a ReadStore) and change things only by asking the realm
  // actor: no value from src/mutations or src/storage. Types are fine (rows and command shapes
  // are what endpoints hand over), values are not.
  {
    files: ['src/endpoints/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/mutations/**', '**/storage/**'],
              allowTypeImports: true,
              message:
                'Endpoints import no value from src/mutations or src/storage: ask the realm actor, read through src/queries, or move the shared value to src/lib.',
            },
          ],
        },
      ],
    },
  },
  // One clock: "now" in endpoints, mutations, queries and the actors is the server's
  // (ServerConfig.clock, or the `now` a mutation is handed), so tests and replays see one time.
  {
    files: [
      'src/endpoints/**/*.ts',
      'src/mutations/**/*.ts',
      'src/queries/**/*.ts',
      'src/delivery/**/*.ts',
      'actors/**/*.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.object.name='Date'][callee.property.name='now']",
          message: 'Take "now" from the server clock (ServerConfig.clock, nowSeconds(config)).',
        },
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Take "now" from the server clock (ServerConfig.clock, nowSeconds(config)).',
        },
      ],
    },
  },
  layer(
    ['actors/**/*.ts'],
    [
      {
        group: ['**/http/**', '**/endpoints/**', 'uWebSockets.js'],
        message: 'Actors know nothing of HTTP.',
      },
      {
        group: ['**/delivery/**'],
        message:
          'The realm actor only publishes (an EventPublisher, src/lib/events.ts): event delivery is src/delivery.',
      },
    ],
  ),
  // Event delivery (queues, their consumers, the wire format) knows no HTTP, SQL or realm actor:
  // events come in by publish(), consumers by attach() (src/delivery/consumer.ts).
  layer(
    ['src/delivery/**/*.ts'],
    [
      {
        group: [
          '**/http/**',
          '**/endpoints/**',
          '**/mutations/**',
          '**/actors/**',
          '**/storage/**',
          '**/queries/**',
          '**/cluster/**',
          '**/workers/**',
          'uWebSockets.js',
          'uws-modern',
        ],
        message:
          'Event delivery knows no HTTP, SQL or actor: events come in by publish(), consumers by attach().',
      },
    ],
  ),
  layer(
    ['workers/**/*.worker.ts'],
    [
      {
        group: [
          '**/storage/**',
          '**/actors/**',
          '**/http/**',
          '**/endpoints/**',
          '**/mutations/**',
        ],
        message: 'Workers are pure functions.',
      },
    ],
  ),
);
