import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/** Debian's chromium; `.ci/run` installs it. CHROMIUM_PATH points elsewhere on other machines. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Flags this machine needs: no sandbox (containers), no GPU, nothing phoning home. */
const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export type TestBrowser = {
  browser: Browser;
  /** A fresh context (its own cookies), closed with the browser. */
  newPage(): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
};

/**
 * One headless Chromium for a whole test file (it takes seconds to start on two cores),
 * with a fresh profile directory, removed on close.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'gatehouse-chromium-'));
  // A plain launch hands Chromium a --user-data-dir of Playwright's own, fresh and removed
  // on close; HOME in a directory of ours keeps anything else it writes out of the real one.
  const browser = await chromium
    .launch({ executablePath: CHROMIUM_PATH, args: FLAGS, env: { ...process.env, HOME: profile } })
    .catch((error: unknown) => {
      // uvu swallows what a `before` hook throws; say here why every test of the file fails.
      console.error(`cannot start Chromium at ${CHROMIUM_PATH} (.ci/run installs Debian's chromium):`, error);
      throw error;
    });
  return {
    browser,
    async newPage() {
      const context = await browser.newContext();
      return { context, page: await context.newPage() };
    },
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Where a test file writes its screenshots: tests/screenshots/<name>/ (ignored by git). */
export function screenshotDir(name: string): string {
  const dir = join(process.cwd(), 'tests', 'screenshots', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
