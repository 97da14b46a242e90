/**
 * Starts a worker thread from a module beside the caller, both when the project runs from source under
 * tsx and when it runs compiled from dist/. Shared by the built-in engines that keep CPU-heavy work off
 * the event loop (`embedding-sentence-encoder.ts`, `image-procedural-model.ts`).
 */
import { Worker } from 'node:worker_threads';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `baseName` is the worker's file name without extension (`embedding-worker`), `callerUrl` the caller's
 * `import.meta.url`. The worker file takes the caller's extension: `.js` once compiled by tsc.
 * From source (`.ts`), Node 20 does not apply the parent's `--import tsx` hooks to a worker's entry
 * module, so a two-line bootstrap registers tsx inside the worker first and then imports the module.
 */
export function startWorkerThread(baseName: string, callerUrl: string): Worker {
  const extension = extname(fileURLToPath(callerUrl));
  const moduleUrl = new URL(`./${baseName}${extension}`, callerUrl);
  if (extension !== '.ts') return new Worker(moduleUrl);
  const tsxApiUrl = import.meta.resolve('tsx/esm/api');
  const bootstrap =
    `import(${JSON.stringify(tsxApiUrl)})` + `.then(({ register }) => { register(); return import(${JSON.stringify(moduleUrl.href)}); })`;
  return new Worker(bootstrap, { eval: true });
}
