import { existsSync } from 'node:fs';
import type { Browser } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it when missing). */
export const CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Headless Chromium for tests that look at a page as a person would. A missing browser fails the test
 * (it is never skipped): CI installs it, and a developer is told how.
 */
export async function launchBrowser(): Promise<TestBrowser> {
  const executablePath = process.env.CHROMIUM_PATH || CHROMIUM_PATHS.find((p) => existsSync(p));
  if (!executablePath) throw new Error('chromium is not installed (apt-get install -y chromium); .ci/run installs it');
  // Loaded here, not at import: most users of @platform/testing never start a browser.
  const { chromium } = await import('playwright-core');
  // Playwright gives every launch a fresh temporary profile (its --user-data-dir), removed on close.
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
  return {
    browser,
    async close() {
      await browser.close().catch(() => {});
    },
  };
}
