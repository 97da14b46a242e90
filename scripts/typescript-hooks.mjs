// TypeScript for the test processes, loaded with `node --import ./scripts/typescript-hooks.mjs`: every
// `.ts` module is turned into JavaScript by esbuild (the transformer tsx itself uses) inside the loading
// thread, through `module.registerHooks` (Node >= 22.15), and the result is kept on disk by content
// hash. tsx registers its hooks with `module.register`, whose hooks run on a separate loader thread that
// every import crosses twice: importing the test server's module graph (~650 modules) cost 2.5-2.7 CPU-s
// a process under tsx against ~1.6-1.9 here, and the suite starts several hundred such processes.
// Only type syntax is removed (the project's tsconfig sets `isolatedModules` and `verbatimModuleSyntax`,
// so a file compiles on its own); imports name their `.ts` files, so resolution is Node's own.
// Type-checking stays with `npm run typecheck`.
//
// Import cost, measured (`src/runtime.ts` imported, CPU ms of one process, quiet machine): 720 with
// Node's source maps on, 640 with V8's compile cache (`module.enableCompileCache`: compiled code kept
// on disk beside the esbuild output), ~590 with both that and the stack traces mapped lazily. Node's
// source-map support (`process.setSourceMapsEnabled`) decodes every module's map as it loads (~90 ms of
// the 720); a test process reads a stack trace only when something fails, so the TypeScript positions
// are put into stack traces here, when one is formatted, from the inline map of the frame's own file.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const cacheDirectory = fileURLToPath(new URL('../node_modules/.cache/switchyard-typescript/', import.meta.url));
mkdirSync(cacheDirectory, { recursive: true });
nodeModule.enableCompileCache?.(fileURLToPath(new URL('../node_modules/.cache/switchyard-compile/', import.meta.url)));

/** The esbuild output file of each loaded `.ts` module, by URL: its inline source map is read from it when a stack needs it. */
const compiledFiles = new Map();

function compiled(url) {
  const path = fileURLToPath(url);
  const source = readFileSync(path, 'utf8');
  const cached = `${cacheDirectory}${createHash('sha1').update(path).update('\0').update(source).digest('hex')}.js`;
  compiledFiles.set(url, cached);
  try {
    return readFileSync(cached, 'utf8');
  } catch {
    const { code } = transformSync(source, { loader: 'ts', format: 'esm', target: 'node22', sourcemap: 'inline', sourcefile: path });
    // Written beside, then renamed: another test process reading the same entry never sees half a file.
    const partial = `${cached}.${process.pid}`;
    writeFileSync(partial, code);
    renameSync(partial, cached);
    return code;
  }
}

const MAP_MARKER = '//# sourceMappingURL=data:application/json;base64,';
/** Parsed source maps by URL (null: none), made the first time a stack has a frame in that file. */
const sourceMaps = new Map();

function sourceMapOf(url) {
  let map = sourceMaps.get(url);
  if (map !== undefined) return map;
  map = null;
  try {
    const code = readFileSync(compiledFiles.get(url), 'utf8');
    const marker = code.lastIndexOf(MAP_MARKER);
    if (marker !== -1) {
      const payload = JSON.parse(Buffer.from(code.slice(marker + MAP_MARKER.length).trim(), 'base64').toString('utf8'));
      map = new nodeModule.SourceMap(payload);
    }
  } catch {
    map = null;
  }
  sourceMaps.set(url, map);
  return map;
}

/** A frame as V8 writes it, its position moved to the TypeScript source when the frame is in a compiled `.ts` file. */
function frame(callSite) {
  const text = String(callSite);
  const url = callSite.getFileName();
  if (url === null || url === undefined || !compiledFiles.has(url)) return text;
  const line = callSite.getLineNumber();
  const column = callSite.getColumnNumber();
  const entry = line === null || column === null ? undefined : sourceMapOf(url)?.findEntry(line - 1, column - 1);
  if (entry?.originalLine === undefined) return text;
  const generated = `${url}:${line}:${column}`;
  const at = text.lastIndexOf(generated);
  if (at === -1) return text;
  return `${text.slice(0, at)}${url}:${entry.originalLine + 1}:${entry.originalColumn + 1}${text.slice(at + generated.length)}`;
}

function header(error) {
  try {
    return error instanceof Error ? Error.prototype.toString.call(error) : String(error);
  } catch {
    return '<error>';
  }
}

// `module.registerHooks` came with Node 22.15; the engines field allows 22.12, where tsx loads instead.
if (typeof nodeModule.registerHooks === 'function') {
  nodeModule.registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
      return { format: 'module', source: compiled(url), shortCircuit: true };
    },
  });
  // Node's own (which maps positions only with its source maps on) is replaced; a library that swaps it
  // for structured call sites restores ours. The location node:test prints beside a failing test's name
  // ("test at file:line") is the compiled one; the stack frames below it are the TypeScript's.
  Error.prepareStackTrace = (error, callSites) => {
    let text = header(error);
    for (const callSite of callSites) text += `\n    at ${frame(callSite)}`;
    return text;
  };
} else {
  process.setSourceMapsEnabled(true);
  await import('tsx/esm');
}
