import { SLOW_RECEIVER_MS, type FairnessResults, type OrdinaryResults } from './fairness.js';
import { count, ms, table, verdict, when } from './report-format.js';

/** Issue 25: the ordinary tenant's PDF p95 under abuse at most this many times its p95 alone. */
export const FAIR_PDF_RATIO = 2;
/** Issue 25: each of its webhooks at the receiver within this long of its commit, whatever the abusive backlog. */
export const FAIR_WEBHOOK_MS = 2_000;

export interface FairnessCheck {
  target: string;
  measured: string;
  /** null: reported, not judged. */
  met: boolean | null;
}

function pdfRatio(results: FairnessResults): number {
  return results.abuse.pdf.p95 / results.alone.pdf.p95;
}

function failedPdfs(r: OrdinaryResults): number {
  return Object.values(r.pdf.failed).reduce((a, b) => a + b, 0);
}

function webhookMet(r: OrdinaryResults): boolean {
  return r.webhook.missing === 0 && r.webhook.max <= FAIR_WEBHOOK_MS;
}

function notReceived(r: OrdinaryResults): string {
  return `${r.webhook.missing} of ${r.webhook.writes} not received ${ms(r.webhook.missingWaitedMs ?? NaN)} or more after their commit`;
}

function webhookText(r: OrdinaryResults): string {
  if (r.webhook.received === 0) return notReceived(r);
  const missing = r.webhook.missing > 0 ? `; ${notReceived(r)}` : '';
  return `max ${ms(r.webhook.max)} (p95 ${ms(r.webhook.p95)}, ${r.webhook.received} received)${missing}`;
}

/** The Targets table's lines for fairness. */
export function fairnessChecks(results: FairnessResults): FairnessCheck[] {
  const ratio = pdfRatio(results);
  const failed = failedPdfs(results.abuse);
  const a = results.abuse.abusive;
  return [
    {
      target: `ordinary tenant's PDF p95 under an abusive tenant's load ≤ ${FAIR_PDF_RATIO}× its p95 alone (same run)`,
      measured:
        `${ratio.toFixed(2)}× (${ms(results.abuse.pdf.p95)} against ${ms(results.alone.pdf.p95)}; ` +
        `p50 ${(results.abuse.pdf.p50 / results.alone.pdf.p50).toFixed(2)}×, ${ms(results.abuse.pdf.p50)} against ${ms(results.alone.pdf.p50)})` +
        `${failed ? `; ${failed} PDFs failed` : ''}`,
      met: ratio <= FAIR_PDF_RATIO && failed === 0,
    },
    {
      target: `ordinary tenant's webhooks within ${FAIR_WEBHOOK_MS / 1000} s of their commit, whatever the abusive backlog`,
      measured: `under abuse ${webhookText(results.abuse)}; alone max ${ms(results.alone.webhook.max)}`,
      met: webhookMet(results.abuse) && webhookMet(results.alone),
    },
    {
      target: 'the abusive tenant refused (replay while one runs: 409; long polls over `EVENTS_MAX_WAITING`: 429)',
      measured: `${a.replays.refused} of ${a.replays.accepted + a.replays.refused + a.replays.other} replays 409; ${a.longPolls.refused} long polls 429 (${a.longPolls.held} held at once)`,
      met: null,
    },
  ];
}

function phaseRow(label: string, r: OrdinaryResults): string[] {
  const failed = failedPdfs(r);
  return [
    label,
    `${ms(r.pdf.p50)}`,
    `${ms(r.pdf.p95)}`,
    `${ms(r.pdf.max)}`,
    `${r.pdf.samples}${
      failed
        ? ` (+${failed} failed: ${Object.entries(r.pdf.failed)
            .map(([status, n]) => `${n}× ${status}`)
            .join(', ')})`
        : ''
    }`,
    ms(r.webhook.p50),
    ms(r.webhook.p95),
    r.webhook.missing > 0 ? `> ${ms(r.webhook.missingWaitedMs ?? NaN)} (${r.webhook.missing} not received)` : ms(r.webhook.max),
    `${r.webhook.received}/${r.webhook.writes}`,
    `${r.longPoll.answered}${r.longPoll.refused ? ` (${r.longPoll.refused} × 429)` : ''}`,
  ];
}

export function fairnessSection(results: FairnessResults): string[] {
  const s = results.settings;
  const a = results.abuse.abusive;
  const checks = fairnessChecks(results);
  const other = Object.entries(a.pdf.other);
  return [
    '## Fair sharing between clients',
    '',
    `Run of ${when(results.at)} (\`pnpm bench:fairness\`; load average at its start ${results.loadAverage.join(', ')}). ` +
      'Production profile: MariaDB (a fresh database `logi_bench_fairness`, two client directories, dropped after), Redis/BullMQ (a queue prefix of its own), ' +
      's3rver, one API process and one `pnpm worker` process (default `WORKER_CONCURRENCY`: 2 Chromium pages, as the PDF part), PDF cache on. ' +
      `The ordinary tenant (${count(s.invoices.ordinary)} invoices) asks for ${s.pdfsPerPhase} PDFs one at a time (\`?lang=pl\`, each another invoice, so each renders) ` +
      `and, beside them, makes ${s.writesPerPhase} writes one at a time (an UPDATE of one invoice, autocommit), each timed from its commit to its \`invoice.updated\` ` +
      'at its own fast webhook receiver; it also holds one long poll. It does so alone, then again while the abusive tenant ' +
      `(${count(s.invoices.abusive)} invoices) keeps ${s.burst} PDF requests in flight, every one another variant (invoice × \`lang\` × \`duplicate\`, so none is in the cache), ` +
      `has an endpoint at a receiver that answers after ${SLOW_RECEIVER_MS / 1000} s and asks every ${s.replayEveryMs / 1000} s for a replay of its whole feed (\`after: 0\`), ` +
      `and holds ${s.longPolls} long polls (\`wait=30\`), asked again as soon as answered (after \`Retry-After\` when refused). ` +
      'The abuse starts 5 s before the ordinary load; the phase ends 15 s after the last write at the latest, and a webhook not received by then is counted with the time it had waited (at least).',
    '',
    table(
      ['Ordinary tenant', 'PDF p50', 'PDF p95', 'PDF max', 'PDFs', 'Webhook p50', 'Webhook p95', 'Webhook max', 'Webhooks', 'Its long polls answered'],
      [phaseRow('alone', results.alone), phaseRow('under abuse', results.abuse)],
      ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
    ),
    '',
    table(
      ['The abusive tenant, while the ordinary load ran', ''],
      [
        [
          'PDFs served',
          `${count(a.pdf.served)} (p50 ${ms(a.pdf.p50Ms)})${other.length ? ` (others: ${other.map(([status, n]) => `${n}× ${status}`).join(', ')})` : ''}; ${count(a.pdf.distinctVariants)} variants asked for`,
        ],
        [
          'Replays',
          `${a.replays.accepted} accepted (${count(a.replays.scheduled)} attempts scheduled), ${a.replays.refused} refused with 409, ${a.replays.other} other`,
        ],
        ['Long polls', `${a.longPolls.held} at once: ${a.longPolls.answered} answered, ${a.longPolls.refused} refused with 429, ${a.longPolls.other} other`],
        ['Its webhooks', `${count(a.webhooks.delivered)} delivered, ${count(a.webhooks.pending)} still pending at the end`],
      ],
    ),
    '',
    ...checks.map((check) => `- ${check.target}: ${check.measured}${check.met === null ? '' : `: ${verdict(check.met)}`}.`),
    '',
  ];
}
