// Lint rules: typescript-eslint's recommended set on every TypeScript file, tests and benchmarks included.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'data/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // Tests read untyped JSON bodies field by field; `any` there is what the assertions check.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  {
    // The dashboard's front end runs in the browser (bundled by scripts/build-dashboard.mjs).
    files: ['src/dashboard/pages/**/*.js'],
    languageOptions: {
      globals: {
        window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly', navigator: 'readonly', fetch: 'readonly',
        FormData: 'readonly', URLSearchParams: 'readonly', CustomEvent: 'readonly', Event: 'readonly', setInterval: 'readonly', clearInterval: 'readonly',
      },
    },
  },
);
