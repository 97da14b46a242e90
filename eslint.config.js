// Lint rules: typescript-eslint's recommended set on every TypeScript file, tests and benchmarks included,
// plus the house's layering as rules: each src folder's README says what it may import, and the
// `no-restricted-imports` blocks below say the same thing executably; `import-x/no-cycle` forbids cycles.
import js from '@eslint/js';
import importX from 'eslint-plugin-import-x';
import reactHooks from 'eslint-plugin-react-hooks';
import tseslint from 'typescript-eslint';

/** `folder may not import these folders`, mirroring the "May import" line of each folder's README. */
const LAYERS = {
  config: [
    'accounts',
    'batches',
    'cli',
    'core',
    'dashboard',
    'db',
    'files',
    'formats',
    'http',
    'limits',
    'providers',
    'routes',
    'services',
    'telemetry',
  ],
  core: [
    'accounts',
    'batches',
    'cli',
    'dashboard',
    'db',
    'files',
    'formats',
    'http',
    'limits',
    'providers',
    'routes',
    'services',
    'telemetry',
  ],
  // Tracing (OpenTelemetry) sits just above core: every layer may hand it spans, it knows none of them.
  telemetry: ['accounts', 'batches', 'cli', 'dashboard', 'db', 'files', 'formats', 'http', 'limits', 'providers', 'routes', 'services'],
  formats: ['accounts', 'batches', 'cli', 'dashboard', 'db', 'files', 'http', 'limits', 'providers', 'routes', 'services'],
  providers: ['accounts', 'batches', 'cli', 'dashboard', 'db', 'files', 'formats', 'http', 'limits', 'routes', 'services'],
  limits: ['accounts', 'batches', 'cli', 'dashboard', 'db', 'files', 'formats', 'http', 'providers', 'routes', 'services'],
  files: ['accounts', 'batches', 'cli', 'dashboard', 'db', 'formats', 'http', 'limits', 'providers', 'routes', 'services'],
  db: ['batches', 'cli', 'dashboard', 'formats', 'http', 'limits', 'providers', 'routes'],
  accounts: ['batches', 'cli', 'dashboard', 'formats', 'http', 'limits', 'providers', 'routes'],
  services: ['batches', 'cli', 'dashboard', 'formats', 'http', 'providers', 'routes'],
  batches: ['cli', 'dashboard', 'formats', 'http', 'providers', 'routes'],
  http: ['batches', 'cli', 'dashboard', 'db', 'formats', 'limits', 'providers', 'routes'],
  routes: ['cli', 'dashboard', 'db', 'limits', 'providers'],
};

const layerRules = Object.entries(LAYERS).map(([folder, forbidden]) => ({
  files: [`src/${folder}/**/*.ts`],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        patterns: [
          {
            group: forbidden.flatMap((other) => [`../${other}/*`, `../../${other}/*`, `../../../${other}/*`]),
            message: `src/${folder}/ may not import this folder (see src/${folder}/README.md and docs/architecture.md).`,
          },
        ],
      },
    ],
  },
}));

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
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  ...layerRules,
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
