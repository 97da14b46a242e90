/**
 * Debian's Chromium driven by playwright-core, headless, with a fresh profile. When /usr/bin/chromium
 * is absent the browser suites skip LOUDLY (CI installs it: .ci/run).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';

export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  console.warn(`\n*** SKIPPED: chromium not found at ${CHROMIUM_PATH}; browser suites did not run (apt-get install -y chromium) ***\n`);
  return false;
}

export interface LaunchedBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A persistent context on a fresh user-data-dir, so no state leaks between runs. */
export async function launchChromium(viewport = { width: 1280, height: 900 }): Promise<LaunchedBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'switchyard-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
