import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Browser, BrowserServer, chromium } from 'playwright-core';
import { tokenFor } from './tokens';

export const BROWSER_WS_ENV = 'ENROLL_TEST_BROWSER_WS';

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Debian's Chromium: CHROMIUM_PATH, else the one scripts/browser.sh finds (or installs). */
function chromiumPath(): string {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  try {
    return execFileSync('bash', ['scripts/browser.sh'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error(
      'no Chromium for the browser tests: sudo apt-get install -y chromium (or set CHROMIUM_PATH)',
    );
  }
}

/**
 * One browser for the whole test run (jest's globalSetup). Playwright gives every launch a
 * fresh temporary profile (user-data dir) and removes it afterwards.
 */
export function launchBrowserServer(): Promise<BrowserServer> {
  return chromium.launchServer({ executablePath: chromiumPath(), args: ARGS, headless: true });
}

/** The run's shared browser; a file run on its own launches one for itself. */
export async function connectBrowser(): Promise<Browser> {
  const ws = process.env[BROWSER_WS_ENV];
  if (ws) return chromium.connect(ws);
  return chromium.launch({ executablePath: chromiumPath(), args: ARGS, headless: true });
}

/**
 * Where a browser test's screenshots go: docs/ with UPDATE_SCREENSHOTS=1 (the README shows
 * them), else a fresh folder beside the run, so a test run leaves the repository as it was.
 */
export function screenshotsDir(name: string): string {
  return process.env.UPDATE_SCREENSHOTS === '1'
    ? resolve(__dirname, '../../docs')
    : mkdtempSync(join(tmpdir(), `${name}-`));
}

/** One admin call with a JSON body against a running server; its JSON answer. */
export async function adminCall(
  baseUrl: string,
  method: string,
  path: string,
  body: object,
): Promise<{ id: number }> {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${tokenFor('admin', 'admin')}`, 'Content-Type': 'application/json' }, // prettier-ignore
    body: JSON.stringify(body),
  });
  return (await res.json()) as { id: number };
}
