// The house rules that import-table.js states, checked on the source itself: every src folder has a row
// in the table, every row names a folder that exists, no file is longer than MAX_FILE_LINES and no function
// longer than MAX_FUNCTION_LINES unless the table lists it as a declarative table, and each folder README
// points at the table instead of keeping its own "may import" line (the table is the only statement).
// Imports are also checked here, type imports included, because lint cannot see those: no import circle
// (`import-x/no-cycle` skips `import type`) and no import, of a value or a type, that the table does not allow.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, test } from 'node:test';
import ts from 'typescript';
import { allowedByTable, importCircles, importEdges, type ImportEdge } from './import-graph.ts';
import { DECLARATIVE_TABLES, IMPORT_TABLE, MAX_FILE_LINES, MAX_FUNCTION_LINES } from '../../import-table.js';

const root = join(import.meta.dirname, '..', '..');
const src = join(root, 'src');

function sourceFiles(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|js)$/.test(entry) && !entry.endsWith('.d.ts') ? [path] : [];
  });
}

function lineCount(text: string): number {
  return text.endsWith('\n') ? text.split('\n').length - 1 : text.split('\n').length;
}

interface FunctionLength {
  name: string;
  lines: number;
}

/** Every function, method, arrow function and accessor with its length in lines, named as a reader would find it. */
function functionLengths(path: string): FunctionLength[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const nameOf = (node: ts.Node): string => {
    const named = node as ts.Node & { name?: ts.Node };
    if (named.name !== undefined) return named.name.getText(source);
    if (ts.isConstructorDeclaration(node)) return 'constructor';
    const parent = node.parent;
    if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
      return parent.name.getText(source);
    return '<anonymous>';
  };
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ name: nameOf(node), lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('house rules (import-table.js)', () => {
  const folders = readdirSync(src).filter((entry) => statSync(join(src, entry)).isDirectory());
  const files = sourceFiles(src);

  test('every src folder has a row in the import table, and every row a folder', () => {
    assert.deepEqual([...folders].sort(), Object.keys(IMPORT_TABLE).sort());
    for (const [folder, { may }] of Object.entries(IMPORT_TABLE)) {
      for (const allowed of may.filter((each) => each !== '*')) {
        const path = join(src, allowed.replace(/\/\*\.ts$/, ''));
        assert.ok(existsSync(path), `${folder} may import ${allowed}, which does not exist`);
      }
    }
  });

  test(`no source file over ${MAX_FILE_LINES} lines, except the declarative tables the table names`, () => {
    const tables: Record<string, string> = DECLARATIVE_TABLES.files;
    const long = files
      .map((path) => ({ file: relative(root, path), lines: lineCount(readFileSync(path, 'utf8')) }))
      .filter(({ file, lines }) => lines > MAX_FILE_LINES && tables[file] === undefined);
    assert.deepEqual(long, []);
  });

  test(`no function over ${MAX_FUNCTION_LINES} lines, except the declarative tables the table names`, () => {
    const tables: Record<string, string> = DECLARATIVE_TABLES.functions;
    const long = files.flatMap((path) =>
      functionLengths(path)
        .filter(({ lines }) => lines > MAX_FUNCTION_LINES)
        .map(({ name, lines }) => ({ function: `${relative(root, path)}:${name}`, lines }))
        .filter((entry) => tables[entry.function] === undefined),
    );
    assert.deepEqual(long, []);
  });

  test('no import circle in src/, type-only imports included', () => {
    assert.deepEqual(importCircles(importEdges(src, files)), []);
  });

  test('no import, of a value or a type, that the import table does not allow', () => {
    const table: Record<string, { may: string[] }> = IMPORT_TABLE;
    const against = importEdges(src, files)
      .filter(({ from, to }) => !allowedByTable(table, from, to))
      .map(({ from, to, typeOnly }) => `${from} -> ${to}${typeOnly ? ' (type)' : ''}`);
    assert.deepEqual(against, []);
  });

  test('services/ and batches/ reach storage through their own ports: no import of db/, of a value or a type', () => {
    const table: Record<string, { may: string[] }> = IMPORT_TABLE;
    for (const folder of ['services', 'batches']) {
      assert.ok(
        !table[folder]!.may.some((allowed) => allowed === 'db' || allowed.startsWith('db/')),
        `the import table lets ${folder}/ import db/`,
      );
    }
    const intoDb = importEdges(src, files)
      .filter(({ from, to }) => /^(services|batches)\//.test(from) && to.startsWith('db/'))
      .map(({ from, to, typeOnly }) => `${from} -> ${to}${typeOnly ? ' (type)' : ''}`);
    assert.deepEqual(intoDb, []);
  });

  test('folder READMEs link the import table and keep no import rule of their own', () => {
    for (const folder of folders) {
      const readme = join(src, folder, 'README.md');
      assert.ok(existsSync(readme), `src/${folder}/README.md is missing`);
      const text = readFileSync(readme, 'utf8');
      assert.match(text, /import-table\.js/, `src/${folder}/README.md does not link import-table.js`);
    }
    for (const path of readmes(src)) {
      const text = readFileSync(path, 'utf8');
      assert.doesNotMatch(text, /^\s*(\*\*)?May import/im, `${relative(root, path)} states its own import rule`);
    }
  });
});

describe('the import graph walk (test/house/import-graph.ts) sees what it must', () => {
  const edge = (from: string, to: string, typeOnly = true): ImportEdge => ({ from, to, typeOnly });

  test('finds a type-only circle of two and of three files, and no circle in a chain', () => {
    const edges = [
      edge('config/cross-check.ts', 'config/load-config.ts'),
      edge('config/load-config.ts', 'config/cross-check.ts', false),
      edge('formats/x/decode-request.ts', 'formats/x/decode-input.ts', false),
      edge('formats/x/decode-input.ts', 'formats/x/decode-messages.ts'),
      edge('formats/x/decode-messages.ts', 'formats/x/decode-request.ts'),
      edge('core/a.ts', 'core/b.ts'),
      edge('core/b.ts', 'core/c.ts'),
    ];
    assert.deepEqual(importCircles(edges), [
      ['config/cross-check.ts', 'config/load-config.ts'],
      ['formats/x/decode-input.ts', 'formats/x/decode-messages.ts', 'formats/x/decode-request.ts'],
    ]);
    assert.deepEqual(importCircles([edge('core/a.ts', 'core/a.ts')]), [['core/a.ts']]);
  });

  test('reads every kind of relative import of a real file, types included', () => {
    const edges = importEdges(src, [join(src, 'config', 'cross-check.ts')]);
    assert.ok(edges.some(({ to, typeOnly }) => to === 'config/schema.ts' && typeOnly));
    assert.ok(edges.some(({ to, typeOnly }) => to === 'config/config-error.ts' && !typeOnly));
  });

  test('reads the table as lint does: folders, top-level files, subfolders, single files, the root', () => {
    const table = { services: { may: ['core', 'limits/*.ts', 'db/repositories', 'accounts/authenticator.ts'] }, runtime: { may: ['*'] } };
    assert.ok(allowedByTable(table, 'services/a.ts', 'services/b/c.ts'));
    assert.ok(allowedByTable(table, 'services/a.ts', 'core/x/y.ts'));
    assert.ok(allowedByTable(table, 'services/a.ts', 'limits/limit-store.ts'));
    assert.ok(!allowedByTable(table, 'services/a.ts', 'limits/redis/redis-limit-store.ts'));
    assert.ok(allowedByTable(table, 'services/a.ts', 'db/repositories/keys.ts'));
    assert.ok(!allowedByTable(table, 'services/a.ts', 'db/schema.ts'));
    assert.ok(allowedByTable(table, 'services/a.ts', 'accounts/authenticator.ts'));
    assert.ok(!allowedByTable(table, 'services/a.ts', 'accounts/plans.ts'));
    assert.ok(!allowedByTable(table, 'services/a.ts', 'runtime.ts'));
    assert.ok(allowedByTable(table, 'runtime/a.ts', 'http/edge.ts'));
    assert.ok(allowedByTable(table, 'app.ts', 'routes/x.ts'));
    assert.ok(!allowedByTable(table, 'nowhere/a.ts', 'core/x.ts'));
  });
});

function readmes(directory: string): string[] {
  return readdirSync(directory).flatMap((entry) => {
    const path = join(directory, entry);
    if (statSync(path).isDirectory()) return readmes(path);
    return entry === 'README.md' ? [path] : [];
  });
}
