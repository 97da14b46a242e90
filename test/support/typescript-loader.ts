/**
 * The flags that make a child `node` process load TypeScript the way the test runner's processes do
 * (scripts/typescript-hooks.mjs: esbuild in the loading thread, cached on disk), for the servers and CLIs
 * the tests start from source. The path is absolute, so a child started in another folder finds it.
 */
import { fileURLToPath } from 'node:url';

export const TYPESCRIPT_LOADER = ['--import', fileURLToPath(new URL('../../scripts/typescript-hooks.mjs', import.meta.url))];
