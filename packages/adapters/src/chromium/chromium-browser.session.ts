import type { Browser, BrowserContext, Page } from 'playwright-core';
import { withTimeout } from '@logi/domain';
import { CrashHandlerDir } from './crash-handler-dir.js';

/**
 * playwright-core is loaded on the first launch, not with the adapters: it
 * costs about 0.6 s of start-up, which a CLI command, a process that never
 * prints and every test file that imports the adapters would pay for nothing.
 */
let playwright: Promise<typeof import('playwright-core')> | null = null;

/**
 * Flags for a headless Chromium on a closed network: no GPU, no background
 * traffic. The crash handlers it starts whatever the flags say are dealt
 * with by CrashHandlerDir.
 */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-quic',
];

export interface PageSlot {
  context: BrowserContext;
  page: Page;
}

/**
 * One launched browser and its warm pages. A page lives in its own context
 * with JavaScript off and every request aborted, so a document can neither
 * run code nor reach the network or the file system.
 */
export class ChromiumBrowserSession {
  /** Renders started on this browser (for the restart-after-N policy). */
  renders = 0;
  private active = 0;
  private retiring = false;
  private closing: Promise<void> | null = null;
  private readonly idle: PageSlot[] = [];

  private constructor(
    readonly browser: Browser,
    private readonly crashHandlers: CrashHandlerDir,
    private readonly onBlockedRequest: (url: string) => void,
  ) {
    // Closed, crashed or killed: its crash handlers have nothing left to watch.
    browser.on('disconnected', () => void crashHandlers.release());
  }

  /** `timeoutMs` bounds the start; a browser that is not up by then is killed. */
  static async launch(executablePath: string, onBlockedRequest: (url: string) => void, timeoutMs: number): Promise<ChromiumBrowserSession> {
    const { chromium } = await (playwright ??= import('playwright-core'));
    const crashHandlers = await CrashHandlerDir.create();
    let browser: Browser;
    try {
      browser = await chromium.launch({
        executablePath,
        headless: true,
        args: CHROMIUM_ARGS,
        env: crashHandlers.env(),
        timeout: timeoutMs,
        // The process owner decides when to shut down and closes the renderer itself.
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (error) {
      await crashHandlers.release({ waitForBrowser: false });
      throw error;
    }
    return new ChromiumBrowserSession(browser, crashHandlers, onBlockedRequest);
  }

  /** Connected, and not being replaced. */
  get usable(): boolean {
    return !this.retiring && this.closing === null && this.browser.isConnected();
  }

  async acquirePage(): Promise<PageSlot> {
    this.active += 1;
    const warm = this.idle.pop();
    if (warm && !warm.page.isClosed()) return warm;
    try {
      return await this.newSlot();
    } catch (error) {
      this.active -= 1;
      throw error;
    }
  }

  /** The render went well: keep the page warm for the next one. */
  releasePage(slot: PageSlot): void {
    this.active -= 1;
    if (this.usable && !slot.page.isClosed()) this.idle.push(slot);
    else void slot.context.close().catch(() => undefined);
    this.closeIfRetiredAndIdle();
  }

  /**
   * The render failed or hung: throw its page away. Resolves false when the
   * page would not close in time (a hung renderer), so the caller can kill the browser.
   */
  async discardPage(slot: PageSlot, graceMs: number): Promise<boolean> {
    this.active -= 1;
    const closed = await withTimeout(
      slot.context.close().then(
        () => true,
        () => true,
      ),
      graceMs,
      { onTimeout: () => false },
    );
    this.closeIfRetiredAndIdle();
    return closed;
  }

  /** Stop taking renders; the browser closes once the ones in flight are done. */
  retire(): void {
    this.retiring = true;
    this.closeIfRetiredAndIdle();
  }

  /** Closes the browser now, whatever is in flight (renders on it fail), and kills its crash handlers. */
  close(): Promise<void> {
    this.closing ??= this.browser
      .close()
      .catch(() => undefined)
      .then(() => this.crashHandlers.release())
      .then(() => undefined);
    return this.closing;
  }

  private closeIfRetiredAndIdle(): void {
    if (this.retiring && this.active === 0) void this.close();
  }

  private async newSlot(): Promise<PageSlot> {
    const context = await this.browser.newContext({
      javaScriptEnabled: false,
      serviceWorkers: 'block',
      acceptDownloads: false,
    });
    try {
      await context.route('**/*', (route) => {
        this.onBlockedRequest(route.request().url());
        return route.abort('blockedbyclient').catch(() => undefined);
      });
      return { context, page: await context.newPage() };
    } catch (error) {
      await context.close().catch(() => undefined);
      throw error;
    }
  }
}
