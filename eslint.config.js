// Lint rules: typescript-eslint's recommended set on every TypeScript file, tests and benchmarks included,
// plus the house's layering: `import-table.js` says which folder of src/ may import which, with the
// reason, and `import-x/no-restricted-paths` enforces exactly that table; `import-x/no-cycle` forbids cycles.
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';
import { restrictedZones } from './import-table.js';

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
    files: ['src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: { 'import-x/extensions': ['.ts', '.js', '.mjs'] },
    rules: {
      'import-x/no-cycle': ['error', { ignoreExternal: true }],
      'import-x/no-restricted-paths': ['error', { zones: restrictedZones(import.meta.dirname) }],
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
    // The dashboard's front end runs in the browser (bundled by scripts/build-dashboard.mjs). Preact's
    // hooks follow React's rules, so React's hooks lint holds them to it (its recommended set, errors).
    files: ['src/dashboard/pages/**/*.js'],
    plugins: reactHooks.configs.flat.recommended.plugins,
    rules: { ...reactHooks.configs.flat.recommended.rules, 'react-hooks/exhaustive-deps': 'error' },
    languageOptions: {
      globals: {
        window: 'readonly',
        document: 'readonly',
        location: 'readonly',
        history: 'readonly',
        navigator: 'readonly',
        fetch: 'readonly',
        FormData: 'readonly',
        URLSearchParams: 'readonly',
        CustomEvent: 'readonly',
        Event: 'readonly',
        Intl: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
      },
    },
  },
);
