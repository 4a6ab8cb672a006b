import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`), which .ci/run installs when missing. */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export const CHROMIUM_PATH: string | undefined = CANDIDATES.find((path) => existsSync(path));

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export interface TestBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/** A fresh Chromium with a throwaway profile: nothing carries over between suites. */
export async function launchChromium(executablePath: string): Promise<TestBrowser> {
  const userDataDir = mkdtempSync(join(tmpdir(), 'loopwright-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 860 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

export type { Browser };
