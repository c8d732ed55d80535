import { existsSync } from 'node:fs';
import { withTimeout, type InvoiceDocument, type PdfRendererPort, type RenderOptions } from '@logi/domain';
import { HandlebarsInvoiceTemplate, type InvoiceHtmlTemplate } from '../handlebars/handlebars-invoice.template.js';
import { ChromiumBrowserSession, type PageSlot } from './chromium-browser.session.js';
import { sweepCrashHandlerDirs } from './crash-handler-dir.js';
import { INTERACTIVE_RESERVE_HOLD_MS } from '../shared/bulk-work.js';
import { acquirePage, RenderPermits } from './render-permits.js';
import { RenderTimeoutError } from './render-timeout.error.js';

/** Where Debian, Ubuntu and Google put the browser; the first that exists wins. */
const SYSTEM_CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

/**
 * An export's render yields to clients' renders for at most `maxMs` before it takes a free page anyway, and holds back
 * `quietMs` after one ends, for the next one of a client that asks one after the other (ADR 0058).
 */
export const BULK_YIELD = { maxMs: 5_000, quietMs: 100 } as const;

/** How long a hung page gets to close before the whole browser is killed. */
const CLOSE_GRACE_MS = 2_000;

export interface ChromiumPdfRendererOptions {
  /** CHROMIUM_PATH; unset or null means the system Chromium. Never downloaded. */
  chromiumPath?: string | null;
  /** Restart the browser after this many documents, so that leaks cannot pile up. */
  rendersPerBrowser: number;
  /** A render that takes longer is stopped and fails. */
  renderTimeoutMs: number;
  /** Pages rendering at once (default 2); further renders wait their turn, up to `renderTimeoutMs`. */
  poolSize?: number;
  /**
   * Pages bulk renders (exports') leave to interactive ones while they run (default 1; never all of them): a process
   * that takes both keeps serving clients during an export. 0 where every render is bulk (a bulk-only worker).
   */
  reservedForInteractive?: number;
  /**
   * How long an export's render holds back from a free page while clients' renders run, wait, or ended less than
   * `quietMs` ago (default `BULK_YIELD`): they get the cores first, and a steady stream of them slows an export
   * without stopping it. `maxMs` 0: bulk renders take any free page within their bound.
   */
  bulkYield?: { maxMs: number; quietMs: number };
  /** Lays the document out; tests swap in hostile HTML to prove the network block. */
  template?: InvoiceHtmlTemplate;
}

export interface ChromiumPdfRendererStats {
  browsersLaunched: number;
  /** Requests a document tried to make (every one was aborted). */
  blockedRequests: number;
}

/**
 * Prints invoice documents with the system Chromium: one warm browser,
 * launched on first use, and a small pool of reused pages. The browser is
 * replaced after `rendersPerBrowser` documents or when it crashed; a render
 * over `renderTimeoutMs` (launch included) has its page (or, if that hangs,
 * the browser) killed, and one that waits that long for a free page gives up.
 */
export class ChromiumPdfRenderer implements PdfRendererPort {
  private readonly template: InvoiceHtmlTemplate;
  private readonly permits: RenderPermits;
  /** Pages that render at once. */
  readonly poolSize: number;
  private session: ChromiumBrowserSession | null = null;
  private launching: Promise<ChromiumBrowserSession> | null = null;
  /** Every browser not yet closed, current and retiring, so close() reaches them all. */
  private readonly sessions = new Set<ChromiumBrowserSession>();
  private closed = false;
  private swept = false;
  private readonly counters: ChromiumPdfRendererStats = { browsersLaunched: 0, blockedRequests: 0 };

  constructor(private readonly options: ChromiumPdfRendererOptions) {
    if (!(options.rendersPerBrowser >= 1)) throw new Error('rendersPerBrowser must be at least 1');
    if (!(options.renderTimeoutMs >= 1)) throw new Error('renderTimeoutMs must be at least 1');
    this.template = options.template ?? new HandlebarsInvoiceTemplate();
    this.poolSize = Math.max(1, options.poolSize ?? 2);
    // A render's wait for a page counts in its budget: an export's render yields a third of it at most.
    const bulkYield = options.bulkYield ?? { ...BULK_YIELD, maxMs: Math.min(BULK_YIELD.maxMs, Math.floor(options.renderTimeoutMs / 3)) };
    // The pages kept for clients' renders are kept while clients render (ADR 0059).
    this.permits = new RenderPermits(this.poolSize, { reserved: options.reservedForInteractive ?? 1, bulkYield, reserveHoldMs: INTERACTIVE_RESERVE_HOLD_MS });
  }

  get stats(): ChromiumPdfRendererStats {
    return { ...this.counters };
  }

  render(document: InvoiceDocument): Promise<Buffer>;
  render(document: InvoiceDocument, options: RenderOptions): Promise<Buffer | null>;
  async render(document: InvoiceDocument, options: RenderOptions = {}): Promise<Buffer | null> {
    const html = this.template.html(document);
    const footer = this.template.footer(document);
    const limitMs = this.options.renderTimeoutMs;
    // One budget for the whole render: the wait for a page, a browser launch and a second try included.
    const deadline = Date.now() + limitMs;
    const left = () => deadline - Date.now();
    // An export's render (the queue says so: runAsRenderWork) waits behind interactive ones for a page, and within its
    // kind by its job's fair rank (a worker fetches more jobs than it has pages: ADR 0054).
    const kind = await acquirePage(this.permits, limitMs);
    if (!kind) throw new RenderTimeoutError(limitMs, 'queue');
    if (options.stillWanted?.() === false) {
      // The caller no longer needs it (its look-up found the PDF while this render waited): the page goes back unused.
      this.permits.release(kind);
      return null;
    }
    try {
      try {
        return await this.renderOnce(html, footer, left(), limitMs);
      } catch (error) {
        // A render that failed fast (crashed or disconnected browser) gets one more
        // go on a fresh browser, in the time that is left.
        if (error instanceof RenderTimeoutError || this.closed || left() <= 0) throw error;
        return await this.renderOnce(html, footer, left(), limitMs);
      }
    } finally {
      this.permits.release(kind);
    }
  }

  async ping(): Promise<void> {
    const session = await this.currentSession();
    if (!session.browser.isConnected()) throw new Error('Chromium is not connected');
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.launching?.catch(() => undefined);
    this.session = null;
    await Promise.all([...this.sessions].map((session) => session.close()));
    this.sessions.clear();
  }

  /**
   * The browser to render on, counting this render against its budget, unless
   * the render was abandoned (timed out) while the browser was launching.
   */
  private async sessionForRender(abandoned: () => boolean): Promise<ChromiumBrowserSession> {
    for (;;) {
      const session = await this.currentSession();
      if (abandoned()) throw new Error('render abandoned while the browser was starting');
      if (session.renders < this.options.rendersPerBrowser) {
        session.renders += 1;
        return session;
      }
      // Budget spent: renders still running on it finish, new ones go to a fresh browser.
      if (this.session === session) this.session = null;
      session.retire();
    }
  }

  /** The warm browser, launched once however many callers ask at the same time. */
  private async currentSession(): Promise<ChromiumBrowserSession> {
    if (this.closed) throw new Error('The PDF renderer is closed');
    if (this.session?.usable) return this.session;
    if (this.session) {
      // Crashed or disconnected: make sure the process is gone before replacing it.
      void this.session.close();
      this.session = null;
    }
    this.launching ??= this.launch().finally(() => {
      this.launching = null;
    });
    return this.launching;
  }

  private async launch(): Promise<ChromiumBrowserSession> {
    const executablePath = this.executablePath();
    if (!this.swept) {
      // Crash directories of a worker killed outright (see CrashHandlerDir); in the background.
      this.swept = true;
      void sweepCrashHandlerDirs().catch(() => undefined);
    }
    let session: ChromiumBrowserSession;
    try {
      // A browser that is not up within a render's time is killed: the renders waiting on it have given up.
      session = await ChromiumBrowserSession.launch(
        executablePath,
        () => {
          this.counters.blockedRequests += 1;
        },
        this.options.renderTimeoutMs,
      );
    } catch (error) {
      throw new Error(`Chromium could not be started from ${executablePath}: ${errorMessage(error)}`, { cause: error });
    }
    this.counters.browsersLaunched += 1;
    this.sessions.add(session);
    session.browser.on('disconnected', () => this.sessions.delete(session));
    if (this.closed) {
      await session.close();
      throw new Error('The PDF renderer is closed');
    }
    this.session = session;
    return session;
  }

  private executablePath(): string {
    const configured = this.options.chromiumPath?.trim();
    if (configured) {
      if (!existsSync(configured)) throw new Error(`No Chromium at CHROMIUM_PATH ${configured}`);
      return configured;
    }
    const found = SYSTEM_CHROMIUM_PATHS.find((candidate) => existsSync(candidate));
    if (!found) throw new Error(`No Chromium found at ${SYSTEM_CHROMIUM_PATHS.join(', ')}; install it or set CHROMIUM_PATH`);
    return found;
  }

  /**
   * One try: the browser (launched if need be), a page, the document, all
   * within `timeLeftMs` (what is left of the render's budget, so a hung launch
   * cannot stretch a render past its limit); a timeout names `limitMs`, the
   * whole budget.
   */
  private async renderOnce(html: string, footer: string, timeLeftMs: number, limitMs: number): Promise<Buffer> {
    // Filled in as the try goes, so that a failure at any point knows what to clean up.
    const attempt: { session: ChromiumBrowserSession | null; slot: PageSlot | null; abandoned: boolean } = {
      session: null,
      slot: null,
      abandoned: false,
    };
    let timedOut = false;

    const work = (async () => {
      const session = (attempt.session = await this.sessionForRender(() => attempt.abandoned));
      const slot = await session.acquirePage();
      if (attempt.abandoned) {
        // The caller gave up while the page opened: nobody else will hand it back.
        void session.discardPage(slot, CLOSE_GRACE_MS);
        throw new RenderTimeoutError(limitMs);
      }
      attempt.slot = slot;
      await slot.page.setContent(html, { waitUntil: 'load', timeout: 0 });
      return slot.page.pdf({
        format: 'A4',
        printBackground: true,
        displayHeaderFooter: true,
        headerTemplate: '<span></span>',
        footerTemplate: footer,
        margin: { top: '14mm', right: '12mm', bottom: '16mm', left: '12mm' },
      });
    })();

    try {
      const pdf = await withTimeout(work, timeLeftMs, {
        onTimeout: () => {
          timedOut = true;
          throw new RenderTimeoutError(limitMs);
        },
      });
      attempt.session!.releasePage(attempt.slot!);
      return pdf;
    } catch (error) {
      attempt.abandoned = true;
      const session = attempt.session;
      // No browser yet: the launch failed (its own error says why) or is still under way
      // (bounded by the same limit; a browser that comes up late serves the next render).
      if (!session) throw error;
      await this.cleanUpAfterFailure(session, attempt.slot, timedOut);
      if (timedOut) throw error;
      throw new Error(`PDF render failed (Chromium ${session.browser.isConnected() ? 'error' : 'stopped'}): ${errorMessage(error)}`, { cause: error });
    }
  }

  private async cleanUpAfterFailure(session: ChromiumBrowserSession, slot: PageSlot | null, timedOut: boolean): Promise<void> {
    const pageClosed = slot !== null && (await session.discardPage(slot, CLOSE_GRACE_MS));
    if (this.session === session && !(timedOut && pageClosed)) this.session = null;
    if (timedOut && !pageClosed) {
      // A page that will not close, or a browser too stuck to open one: kill the browser.
      await session.close();
    } else if (!timedOut) {
      // Anything but a slow document means the browser is suspect: replace it once it is idle.
      session.retire();
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}
