import { execFileSync } from 'node:child_process';
import { Browser, BrowserServer, chromium } from 'playwright-core';

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
