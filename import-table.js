// The one statement of who may import whom in src/, with the reason for each folder. eslint.config.js
// derives its import rules from this table (an import not allowed here is a lint error), and the folder
// READMEs link here instead of repeating it. A `may` entry names a whole folder (`core`), a folder's
// top-level files only (`limits/*.ts`: the ports, not the backends in its subfolders), a subfolder
// (`db/repositories`) or one file; `*` is everything (the composition root's `runtime/` steps). A folder
// may always import its own files. The root files (`main.ts`, `runtime.ts`, `app.ts`) are the
// composition root and may import anything; nothing below them imports them, except what a row names
// (`cli` may import `runtime.ts`).
//
// Size rule, checked by test/house/house-rules.test.ts: no file in src/ over MAX_FILE_LINES lines and no
// function over MAX_FUNCTION_LINES, except the declarative tables listed in DECLARATIVE_TABLES (data
// that reads top to bottom: splitting it would scatter one table over several files).

export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 100;

/** @type {Record<string, { may: string[]; why: string }>} */
export const IMPORT_TABLE = {
  core: {
    may: [],
    why: 'the canonical contract (requests, stream parts, usage, errors) and pure helpers: everything depends on it, it on nothing of ours',
  },
  config: {
    may: ['core'],
    why: "the operator's config, read and validated once at start: a value the rest receives, knowing none of them",
  },
  telemetry: {
    may: ['core', 'config'],
    why: 'tracing sits just above core: every layer may hand it spans, it knows none of them',
  },
  formats: {
    may: ['core'],
    why: 'client wire formats know only the canonical contract, never a backend or HTTP',
  },
  providers: {
    may: ['core', 'config'],
    why: 'backends translate the canonical contract to an upstream wire or engine; they never see a client format',
  },
  limits: {
    may: ['core', 'config'],
    why: 'counters and routing state behind small ports (the top-level files); backends in subfolders',
  },
  files: {
    may: ['core', 'config'],
    why: 'the blob store port (top-level files) and its backends; knows nothing of who stores what',
  },
  db: {
    may: [
      'core',
      'services/metering/usage-ledger.ts',
      'services/files/file-record.ts',
      'services/budgets/budget-records.ts',
      'services/alerts/alert-records.ts',
      'services/responses/stored-response-records.ts',
      'batches/batch-records.ts',
      'batches/batch-store.ts',
    ],
    why: 'storage: repositories implement the records and ports their owners declare (ledger, files, budgets, alerts, stored responses, batches) and nothing else of theirs',
  },
  accounts: {
    may: ['core', 'config', 'db/repositories', 'db/schema.ts', 'services/caller-identity.ts'],
    why: 'keys, organizations, owners and plans: account rules over the repositories; a key becomes the caller identity the use cases declare',
  },
  services: {
    may: ['core', 'config', 'telemetry', 'limits/*.ts', 'files/*.ts'],
    why: 'the use cases: reach storage only through the ports they declare (db implements them), never a repository, HTTP, a format or a backend',
  },
  batches: {
    may: ['core', 'config', 'telemetry', 'limits/*.ts', 'services'],
    why: 'the batch engine runs lines through the same use cases the routes use, off the HTTP path; its storage through the ports it declares (batch-store.ts)',
  },
  http: {
    may: ['core', 'config', 'telemetry', 'accounts/authenticator.ts', 'services'],
    why: 'the HTTP edge: authentication, errors, SSE, metadata; the only HTTP-aware layer below routes',
  },
  routes: {
    may: ['core', 'config', 'telemetry', 'formats', 'services', 'http', 'batches', 'files/signed-url.ts'],
    why: 'decode -> service -> reply: each route wires a format to a use case through the edge',
  },
  dashboard: {
    may: [
      'core',
      'config',
      'accounts',
      'batches',
      'db/repositories',
      'limits/*.ts',
      'services',
      'http/multipart-parts.ts',
      'formats/openai-files',
      'formats/openai-batches',
    ],
    why: "the owners' and operators' web console: beside routes, over the same account rules and services (and the same upload parts and File and Batch wire objects)",
  },
  runtime: {
    may: ['*'],
    why: "the composition root's start steps (called by runtime.ts): they build everything, so they may import anything",
  },
  cli: {
    may: ['core', 'config', 'accounts', 'db/database.ts', 'db/repositories', 'limits/*.ts', 'services', 'runtime.ts'],
    why: "the operator's commands: account rules and reports over the database they open; `serve` starts the runtime",
  },
};

/** Files allowed past MAX_FILE_LINES / functions past MAX_FUNCTION_LINES because they are one declarative table. */
export const DECLARATIVE_TABLES = {
  files: {
    'src/routes/openapi-schemas.ts':
      "the JSON Schemas of every operation in /v1/openapi.json, one entry per wire shape; test/e2e/openapi-answers.test.ts holds them to the server's own answers",
  },
  functions: {},
};

/**
 * The ESLint `import-x/no-restricted-paths` zones for the table: for each folder, everything in src/
 * outside the folder and outside its `may` list is forbidden.
 * @param {string} root absolute path of the repository
 */
export function restrictedZones(root) {
  // The rule takes glob exceptions only: one file is written as the extglob `@(name.ts)`.
  const glob = (spec) => {
    if (spec.includes('*')) return `${root}/src/${spec}`;
    if (/\.[jt]s$/.test(spec)) return `${root}/src/${spec.replace(/[^/]+$/, (name) => `@(${name})`)}`;
    return `${root}/src/${spec}/**`;
  };
  return Object.entries(IMPORT_TABLE)
    .filter(([, { may }]) => !may.includes('*'))
    .map(([folder, { may, why }]) => ({
      target: `./src/${folder}/**`,
      from: `${root}/src/**`,
      except: [glob(folder), ...may.map(glob)],
      message: `src/${folder}/ may import only ${may.length === 0 ? 'nothing of ours' : may.join(', ')}: ${why} (import-table.js).`,
    }));
}
