import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// node:test's describe/it/test/hooks return promises that the runner itself awaits; leaving
// them unawaited at the top level is how the API is meant to be used.
const NODE_TEST_CALLS = ['describe', 'it', 'test', 'suite', 'before', 'after', 'beforeEach', 'afterEach'].map((name) => ({
  from: 'package',
  package: 'node:test',
  name,
}));

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
      'no-restricted-syntax': ['error', { selector: 'ExportAllDeclaration', message: 'Name the exports (no export *).' }],
    },
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
