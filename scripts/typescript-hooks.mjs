// TypeScript for the test processes, loaded with `node --import ./scripts/typescript-hooks.mjs`: every
// `.ts` module is turned into JavaScript by esbuild (the transformer tsx itself uses) inside the loading
// thread, through `module.registerHooks` (Node >= 22.15), and the result is kept on disk by content
// hash. tsx registers its hooks with `module.register`, whose hooks run on a separate loader thread that
// every import crosses twice: importing the test server's module graph (~650 modules) cost 2.5-2.7 CPU-s
// a process under tsx against ~1.6-1.9 here, and the suite starts several hundred such processes.
// Only type syntax is removed (the project's tsconfig sets `isolatedModules` and `verbatimModuleSyntax`,
// so a file compiles on its own); imports name their `.ts` files, so resolution is Node's own.
// Type-checking stays with `npm run typecheck`. Stack traces point into the TypeScript (inline source maps).
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';

const cacheDirectory = fileURLToPath(new URL('../node_modules/.cache/switchyard-typescript/', import.meta.url));
mkdirSync(cacheDirectory, { recursive: true });
process.setSourceMapsEnabled(true);

function compiled(path) {
  const source = readFileSync(path, 'utf8');
  const cached = `${cacheDirectory}${createHash('sha1').update(path).update('\0').update(source).digest('hex')}.js`;
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

// `module.registerHooks` came with Node 22.15; the engines field allows 22.12, where tsx loads instead.
if (typeof nodeModule.registerHooks === 'function') {
  nodeModule.registerHooks({
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
      return { format: 'module', source: compiled(fileURLToPath(url)), shortCircuit: true };
    },
  });
} else {
  await import('tsx/esm');
}
