import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * Flags this machine needs: no sandbox (containers), no GPU, nothing phoning home (the closed
 * network refuses those connections). Not `chromium.args` of @sparticuz/chromium: that list is
 * for AWS Lambda and turns off web security and site isolation, which the CORS and CSRF tests
 * rely on the browser to enforce.
 */
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

/** Where a machine without the lockfile's browser (not Linux x64) usually has one. */
const SYSTEM_BROWSERS: Partial<Record<NodeJS.Platform, string[]>> = {
  linux: ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/snap/bin/chromium'],
  darwin: ['/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', '/Applications/Chromium.app/Contents/MacOS/Chromium'],
  win32: ['C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe', 'C:\\Program Files (x86)\\Google\\Chrome\\Application\\chrome.exe'],
};

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SPARTICUZ = join(ROOT, 'node_modules', '@sparticuz', 'chromium');

/**
 * Runs the package's own unpacking in a child whose temporary directory is ours: the package
 * writes to `os.tmpdir()`, and its /tmp/chromium is neither versioned nor written atomically
 * (a second process finds the file half-written and starts it). Claiming to be Amazon Linux
 * makes it unpack its NSS libraries too, for a machine that lacks them.
 */
const UNPACK_SCRIPT = "const { default: chromium } = await import('@sparticuz/chromium'); process.stdout.write(await chromium.executablePath());";

export type Chromium = {
  executablePath: string;
  /** Added to the browser's environment. */
  env: Record<string, string>;
  /** Said when it does not start. */
  origin: string;
};

/** The browser the tests drive: CHROMIUM_PATH, else the lockfile's, else one the machine has. */
export async function findChromium(): Promise<Chromium> {
  const chosen = process.env.CHROMIUM_PATH;
  if (chosen) return { executablePath: chosen, env: {}, origin: 'CHROMIUM_PATH' };
  let unpackError: unknown = 'it ships Linux x64 only';
  if (process.platform === 'linux' && process.arch === 'x64') {
    try {
      return await lockfileChromium();
    } catch (error) {
      unpackError = error;
    }
  }
  const installed = (SYSTEM_BROWSERS[process.platform] ?? []).find((path) => existsSync(path));
  if (installed) return { executablePath: installed, env: {}, origin: 'the machine' };
  throw new Error(
    `no Chromium for the browser tests: @sparticuz/chromium cannot serve here (${String(unpackError)}) and none of ` +
      `${(SYSTEM_BROWSERS[process.platform] ?? []).join(', ') || 'the usual places'} exists; install Chrome or Chromium, or set CHROMIUM_PATH to its binary`,
  );
}

async function lockfileChromium(): Promise<Chromium> {
  const version = JSON.parse(readFileSync(join(SPARTICUZ, 'package.json'), 'utf8')).version as string;
  const dir = join(ROOT, 'node_modules', '.cache', 'gatehouse-chromium', version);
  if (!existsSync(dir)) await unpackOnce(dir);
  const executablePath = join(dir, 'chromium');
  return { executablePath, env: libraryEnv(executablePath, join(dir, 'al2023', 'lib')), origin: `@sparticuz/chromium ${version}` };
}

/**
 * Unpacks into a directory of its own and renames it into place, so `dir` exists only when
 * complete: two test files starting at once, or a run killed halfway, cannot leave a binary
 * that another process starts half-written.
 */
async function unpackOnce(dir: string): Promise<void> {
  mkdirSync(dirname(dir), { recursive: true });
  const staging = mkdtempSync(`${dir}.partial-`);
  try {
    const env = { ...process.env, TMPDIR: staging, AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs20.x' };
    await promisify(execFile)(process.execPath, ['--input-type=module', '-e', UNPACK_SCRIPT], { cwd: ROOT, env });
    renameOrLoseRace(staging, dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

function renameOrLoseRace(staging: string, dir: string): void {
  try {
    renameSync(staging, dir);
  } catch (error) {
    // Another process renamed the same bytes into place first.
    if (!existsSync(dir)) throw error;
  }
}

/**
 * The binary links NSS and expat from the system. Where those are missing, the package's
 * Amazon Linux copies stand in; not always, as they need glibc 2.34 and the binary only 2.25.
 */
function libraryEnv(executablePath: string, bundledLibs: string): Record<string, string> {
  const ldd = spawnSync('ldd', [executablePath], { encoding: 'utf8' });
  if (!ldd.stdout?.includes('not found')) return {};
  const inherited = process.env.LD_LIBRARY_PATH;
  return { LD_LIBRARY_PATH: inherited ? `${bundledLibs}:${inherited}` : bundledLibs };
}

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
  const browser = await startChromium(profile).catch((error: unknown) => {
    rmSync(profile, { recursive: true, force: true });
    // uvu swallows what a `before` hook throws; say here why every test of the file fails.
    console.error('cannot start Chromium:', error);
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

async function startChromium(profile: string): Promise<Browser> {
  const found = await findChromium();
  // A plain launch hands Chromium a --user-data-dir of Playwright's own, fresh and removed
  // on close; HOME in a directory of ours keeps anything else it writes out of the real one,
  // and TMPDIR there too keeps its scratch files (.org.chromium.Chromium.*), which a browser
  // closed under load can leave behind, out of the run's.
  const scratch = join(profile, 'tmp');
  mkdirSync(scratch);
  const env = { ...process.env, ...found.env, HOME: profile, TMPDIR: scratch };
  return chromium.launch({ executablePath: found.executablePath, args: FLAGS, env }).catch((error: unknown) => {
    throw new Error(`Chromium at ${found.executablePath} (from ${found.origin}) did not start; CHROMIUM_PATH picks another`, { cause: error });
  });
}

/** Where a test file writes its screenshots: tests/screenshots/<name>/ (ignored by git). */
export function screenshotDir(name: string): string {
  const dir = join(process.cwd(), 'tests', 'screenshots', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
