import type { ExportsResults } from './exports.js';
import { ms, table, when } from './report-format.js';
import type { FairnessCheck } from './fairness-report.js';

/** Issue 27: an export's PDFs/s at least this share of the bare renderer's, in the same run. */
export const EXPORT_SPEED_RATIO = 0.7;
/** Issue 27: another client's interactive PDF p95 during an export within this many times its p95 idle. */
export const EXPORT_FAIR_RATIO = 2;
/** Issue 27: the worker's RSS grows by less than this over an export of 5,000 invoices. */
export const EXPORT_RSS_GROWTH_MIB = 100;
/** Issue 38: the worker's RSS after the export within this share over its RSS before it. */
export const EXPORT_RSS_RETURN_RATIO = 1.1;

export function exportsChecks(r: ExportsResults): FairnessCheck[] {
  return [
    {
      target: `an export of ~2,000 invoices with PDFs (cold cache) ≥ ${EXPORT_SPEED_RATIO} of the bare renderer's PDFs/s`,
      measured: r.speed
        ? `${r.speed.ratio.toFixed(2)} (${r.speed.invoices} invoices in ${r.speed.seconds.toFixed(1)} s: ${r.speed.perSecond.toFixed(1)}/s against ${r.speed.barePerSecond.toFixed(1)}/s)`
        : 'not measured',
      met: r.speed ? r.speed.ratio >= EXPORT_SPEED_RATIO : null,
    },
    {
      target: `another client's PDF p95 during an export ≤ ${EXPORT_FAIR_RATIO}× idle (one worker)`,
      measured: r.interactive ? `${r.interactive.ratio.toFixed(2)}× (${ms(r.interactive.busyP95)} against ${ms(r.interactive.idleP95)})` : 'not measured',
      met: r.interactive ? r.interactive.ratio <= EXPORT_FAIR_RATIO : null,
    },
    {
      target: `another client's PDF p95 during an export ≤ ${EXPORT_FAIR_RATIO}× idle (one interactive plus one bulk worker)`,
      measured: r.pools ? `${r.pools.ratio.toFixed(2)}× (${ms(r.pools.busyP95)} against ${ms(r.pools.idleP95)})` : 'not measured',
      met: r.pools ? r.pools.ratio <= EXPORT_FAIR_RATIO : null,
    },
    {
      target: `worker RSS grows < ${EXPORT_RSS_GROWTH_MIB} MiB over an export of 5,000 invoices`,
      measured: `${r.rss.growthMiB.toFixed(0)} MiB over ${r.rss.invoices} invoices (${r.rss.beforeMiB.toFixed(0)} -> ${r.rss.maxMiB.toFixed(0)} MiB)`,
      met: r.rss.growthMiB < EXPORT_RSS_GROWTH_MIB && r.rss.invoices >= 5_000 ? true : r.rss.growthMiB < EXPORT_RSS_GROWTH_MIB ? null : false,
    },
    {
      target: `worker RSS after the export within ${Math.round((EXPORT_RSS_RETURN_RATIO - 1) * 100)} % of its start`,
      measured:
        r.rss.afterMiB === undefined
          ? 'not measured'
          : `${r.rss.afterMiB.toFixed(0)} MiB after against ${r.rss.beforeMiB.toFixed(0)} MiB before (${((r.rss.afterMiB / r.rss.beforeMiB - 1) * 100).toFixed(1)} %)`,
      met: r.rss.afterMiB === undefined ? null : r.rss.afterMiB <= r.rss.beforeMiB * EXPORT_RSS_RETURN_RATIO,
    },
  ];
}

export function exportsSection(r: ExportsResults): string[] {
  return [
    '## Exports',
    '',
    `Measured ${when(r.at)} (load average ${r.loadAverage.join(', ')}), production profile: MariaDB, Redis, ${r.storage ?? 's3rver'}, one API and one worker ` +
      `(WORKER_CONCURRENCY 2; then one with WORKER_QUEUES=interactive and one with bulk, both without CAP_SYS_NICE as the image runs them, in German for a cold cache), ${r.seeded} invoices in the exporting directory. The bare renderer prints the same template in the bench process ` +
      'with the same pool size; the export starts on an empty PDF cache. The other client asks for its PDFs one at a time, each another invoice.',
    '',
    table(
      ['', 'Measured'],
      [
        ...(r.speed
          ? [
              ['Export with PDFs', `${r.speed.invoices} invoices in ${r.speed.seconds.toFixed(1)} s, ${r.speed.perSecond.toFixed(1)}/s`],
              ['Bare renderer', `${r.speed.barePerSecond.toFixed(1)}/s (ratio ${r.speed.ratio.toFixed(2)})`],
            ]
          : []),
        ...(r.interactive
          ? [
              ['Other client, idle', `p50 ${ms(r.interactive.idleP50)}, p95 ${ms(r.interactive.idleP95)} (${r.interactive.samples} PDFs)`],
              ['Other client, during the export', `p50 ${ms(r.interactive.busyP50)}, p95 ${ms(r.interactive.busyP95)} (${r.interactive.ratio.toFixed(2)}×)`],
            ]
          : []),
        ...(r.afterLull && r.interactive
          ? [
              [
                `Other client, a PDF after ${(r.afterLull.quietMs / 1000).toFixed(0)} s without one, during the export`,
                r.afterLull.times.length === 0
                  ? 'not measured (the export had ended)'
                  : `${r.afterLull.times.map((t) => ms(t)).join(', ')} (at most ${(Math.max(...r.afterLull.times) / r.interactive.idleP50).toFixed(2)}× its p50 idle)`,
              ],
            ]
          : []),
        [
          'Worker RSS',
          `${r.rss.beforeMiB.toFixed(0)} MiB before, at most ${r.rss.maxMiB.toFixed(0)} MiB over an export of ${r.rss.invoices} invoices` +
            (r.rss.afterMiB === undefined ? '' : `, ${r.rss.afterMiB.toFixed(0)} MiB after`),
        ],
        ...(r.pools
          ? [
              ['Other client, idle (interactive + bulk worker)', `p50 ${ms(r.pools.idleP50)}, p95 ${ms(r.pools.idleP95)} (${r.pools.samples} PDFs)`],
              [
                'Other client, during the export (interactive + bulk worker)',
                `p50 ${ms(r.pools.busyP50)}, p95 ${ms(r.pools.busyP95)} (${r.pools.ratio.toFixed(2)}×; export of ${r.pools.invoices} in ${r.pools.seconds.toFixed(1)} s)`,
              ],
            ]
          : []),
      ],
    ),
    '',
  ];
}
