import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { layerRules } from './scripts/layers.js';

// node:test's describe/it/test/hooks return promises that the runner itself awaits; leaving
// them unawaited at the top level is how the API is meant to be used.
const NODE_TEST_CALLS = ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'].map((name) => ({
  from: 'package',
  package: 'node:test',
  name,
}));

// The layers of src/ (docs/architecture.md draws them). Each unit is a folder; a deeper entry wins,
// so src/server/stream is its own unit and the rest of src/server is the endpoint. `may`: the units
// it imports freely. `entry`: the units it takes only through their public entry points, the modules
// package.json "exports" publishes. Anything else is refused, a folder missing from the table too.
// src/platform is reached only through the package.json "imports" aliases (#crypto, #turn).
const BELOW_SERVER = ['protocol', 'telemetry', 'store'];
const LAYERS = {
  protocol: { may: [] },
  platform: { may: [] },
  telemetry: { may: ['protocol'] },
  store: { may: ['protocol'] },
  client: { may: ['protocol', 'telemetry'] },
  'server/stream': { may: BELOW_SERVER },
  'server/upgrade': { may: [...BELOW_SERVER, 'server/stream'] },
  'server/session': { may: [...BELOW_SERVER, 'server/upgrade', 'server/stream'] },
  'server/cluster': { may: [...BELOW_SERVER, 'server/session', 'server/upgrade', 'server/stream'] },
  server: { may: [...BELOW_SERVER, 'server/cluster', 'server/session', 'server/upgrade', 'server/stream'] },
  // Adapters: they serve an endpoint on a host, as a user of the package would.
  node: { may: [], entry: ['protocol', 'server'] },
  frameworks: { may: [], entry: ['protocol', 'server', 'node'] },
  chaos: { may: [] },
  // The reference server: built as a user of the package would, on the server's public entry.
  example: { may: [], entry: ['server'] },
  // The command line is the program on top: any folder, but the server only through its endpoint.
  cli: { may: ['protocol', 'telemetry', 'store', 'client', 'server', 'node', 'chaos', 'example'] },
};

// Imports against the table that stay until their modules move: internals of server/stream that
// the node adapters need and the server's index does not publish, and fastify's use of the node
// adapter's request identity.
export const LAYER_EXCEPTIONS = {
  'src/node/adapter.ts': ['src/server/stream/http.ts'],
  'src/node/websocket.ts': ['src/server/stream/http.ts', 'src/server/stream/event-sink.ts'],
  'src/node/response.ts': ['src/server/stream/sse-sink.ts'],
  'src/frameworks/fastify.ts': ['src/server/stream/http.ts', 'src/node/identity.ts'],
};

const NO_EXPORT_ALL = { selector: 'ExportAllDeclaration', message: 'Name the exports (no export *).' };
// no-restricted-imports does not see import(): below the command line, a relative one would slip past the layers.
const NO_RELATIVE_IMPORT_CALL = {
  selector: 'ImportExpression[source.value=/^\\./]',
  message: 'Import statically, so the layer rule sees it. See docs/architecture.md.',
};

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.conformance/', 'bench/results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      // Examples compile against the published types (their own tsconfig); the rest as the test typecheck does.
      parserOptions: { project: ['./tsconfig.test.json', './examples/tsconfig.json'], tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': ['error', { allowForKnownSafeCalls: NODE_TEST_CALLS }],
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      // Off: an async function without await is how a Promise-returning port is written here, so a throw stays a rejection.
      '@typescript-eslint/require-await': 'off',
      // Passing on a caught error (typed unknown) is forwarding, not inventing a non-Error reason.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      // A public surface is what the index files name, one by one: `export *` would publish every helper a module adds.
      'no-restricted-syntax': ['error', NO_EXPORT_ALL, NO_RELATIVE_IMPORT_CALL],
    },
  },
  ...layerRules(import.meta.dirname, LAYERS, LAYER_EXCEPTIONS),
  {
    // serve loads the modern reference server only when its optional SDK is installed.
    files: ['src/cli/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', NO_EXPORT_ALL] },
  },
  {
    files: ['test/**/*.ts'],
    rules: {
      // Off in tests: they read wire JSON (parsed as any) and print whatever arrived in failure messages; the shape is what they assert.
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-base-to-string': 'off',
    },
  },
  {
    // Plain JavaScript (entry shims, fixtures, scripts) is outside the TypeScript projects.
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // The `require` entry points of the package (CommonJS by necessity).
    files: ['entry/**/*.cjs', 'test/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
