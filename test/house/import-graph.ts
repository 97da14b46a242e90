// The import graph of src/, type imports included: lint's `import-x/no-cycle` skips `import type`, so the
// house test walks the graph itself. Every relative module specifier counts: `import` and `import type`,
// `export ... from`, `import('...')` calls and `import('...').Type` type references.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import ts from 'typescript';

export interface ImportEdge {
  /** Importing file, relative to src/ with `/` separators. */
  from: string;
  /** Imported file, relative to src/. */
  to: string;
  /** True when the import brings in types only (`import type`, `export type`, `import('...').Type`). */
  typeOnly: boolean;
}

function specifiers(path: string): { specifier: string; typeOnly: boolean }[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: { specifier: string; typeOnly: boolean }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const namedTypesOnly =
        clause?.name === undefined &&
        clause?.namedBindings !== undefined &&
        ts.isNamedImports(clause.namedBindings) &&
        clause.namedBindings.elements.length > 0 &&
        clause.namedBindings.elements.every((element) => element.isTypeOnly);
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: clause?.isTypeOnly === true || namedTypesOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      found.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.push({ specifier: node.argument.literal.text, typeOnly: true });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument !== undefined && ts.isStringLiteral(argument)) found.push({ specifier: argument.text, typeOnly: false });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function resolveRelative(from: string, specifier: string): string | undefined {
  const base = join(dirname(from), specifier);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((candidate) => existsSync(candidate) && statSync(candidate).isFile());
}

/** Every import between files of src/ (imports of packages and of files outside src/ are left out). */
export function importEdges(src: string, files: readonly string[]): ImportEdge[] {
  const name = (path: string): string => relative(src, path).split(sep).join('/');
  return files.flatMap((file) =>
    specifiers(file)
      .filter(({ specifier }) => specifier.startsWith('.'))
      .flatMap(({ specifier, typeOnly }) => {
        const target = resolveRelative(file, specifier);
        if (target === undefined || name(target).startsWith('..')) return [];
        return [{ from: name(file), to: name(target), typeOnly }];
      }),
  );
}

/** The import circles: each strongly connected group of two or more files (or a file importing itself), sorted. */
export function importCircles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  // Tarjan's strongly connected components, iterative so a deep graph cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const circles: string[][] = [];
  let counter = 0;
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; children: string[] }[] = [];
    const enter = (node: string): void => {
      index.set(node, counter);
      low.set(node, counter);
      counter += 1;
      stack.push(node);
      onStack.add(node);
      work.push({ node, children: [...(next.get(node) ?? [])] });
    };
    enter(start);
    for (let frame = work.at(-1); frame !== undefined; frame = work.at(-1)) {
      const child = frame.children.shift();
      if (child !== undefined) {
        if (!index.has(child)) enter(child);
        else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(child)!));
        continue;
      }
      work.pop();
      const parent = work.at(-1)?.node;
      if (parent !== undefined) low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      if (low.get(frame.node) === index.get(frame.node)) {
        const group: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          group.push(member);
        } while (member !== frame.node);
        const selfImport = (next.get(frame.node) ?? []).includes(frame.node);
        if (group.length > 1 || selfImport) circles.push(group.sort());
      }
    }
  }
  return circles.sort((a, b) => a.join().localeCompare(b.join()));
}

/**
 * Whether the import table lets `from` import `to` (both relative to src/), read as `restrictedZones` in
 * import-table.js reads it: a folder may import its own files and what its row's `may` names (a folder, a
 * folder's top-level files `x/*.ts`, a subfolder or one file; `*` is everything). The root files are the
 * composition root and may import anything.
 */
export function allowedByTable(table: Record<string, { may: string[] }>, from: string, to: string): boolean {
  const folder = from.includes('/') ? from.split('/')[0] : undefined;
  if (folder === undefined || to.startsWith(`${folder}/`)) return true;
  const row = table[folder];
  if (row === undefined) return false;
  return row.may.some((spec) => {
    if (spec === '*') return true;
    if (spec.endsWith('/*.ts')) {
      const directory = spec.slice(0, -'*.ts'.length);
      return to.startsWith(directory) && !to.slice(directory.length).includes('/') && to.endsWith('.ts');
    }
    if (/\.[jt]s$/.test(spec)) return to === spec;
    return to.startsWith(`${spec}/`);
  });
}
