import { escapeCell, ms, table, verdict, when } from './report-format.js';
import type { StartupResults, StartupRow } from './startup.js';

/** The target of issue 19: the built code ready in at most this share of the time the image took before. */
export const STARTUP_TARGET = 0.4;

export interface StartupCheck {
  target: string;
  measured: string;
  met: boolean;
}

function row(results: StartupResults, process: StartupRow['process'], variant: StartupRow['variant']): StartupRow | undefined {
  return results.rows.find((r) => r.process === process && r.variant === variant);
}

/** Built against the image's start before this change (pnpm, then tsx on an empty cache), per process. */
function ratios(results: StartupResults): Array<{ process: StartupRow['process']; ratio: number; built: StartupRow; before: StartupRow }> {
  return (['api', 'worker'] as const).flatMap((process) => {
    const built = row(results, process, 'built');
    const before = row(results, process, 'pnpm-tsx-cold');
    return built && before ? [{ process, ratio: built.readyMedianMs / before.readyMedianMs, built, before }] : [];
  });
}

/** The Targets table's line for start-up. */
export function startupCheck(results: StartupResults): StartupCheck | null {
  const measured = ratios(results);
  if (!measured.length) return null;
  return {
    target: `ready (spawn to /health/ready) in ≤ ${STARTUP_TARGET}× the time of the image before (\`pnpm start\`/\`pnpm worker\` through tsx), API and worker`,
    measured: measured.map((m) => `${m.process} ${m.ratio.toFixed(2)}× (${ms(m.built.readyMedianMs)} against ${ms(m.before.readyMedianMs)})`).join('; '),
    met: measured.every((m) => m.ratio <= STARTUP_TARGET),
  };
}

export function startupSection(results: StartupResults): string[] {
  const check = startupCheck(results);
  const lines = results.rows.map((r) => {
    const before = row(results, r.process, 'pnpm-tsx-cold');
    const warm = row(results, r.process, 'tsx');
    return [
      r.process === 'api' ? 'API' : 'worker',
      escapeCell(r.label),
      ms(r.readyMedianMs),
      `${ms(Math.min(...r.readyMs))} – ${ms(Math.max(...r.readyMs))}`,
      before ? `${(r.readyMedianMs / before.readyMedianMs).toFixed(2)}×` : '–',
      warm ? `${(r.readyMedianMs / warm.readyMedianMs).toFixed(2)}×` : '–',
      `${r.rssMedianMiB.toFixed(0)} MiB`,
    ];
  });
  return [
    '## Start-up: built against tsx',
    '',
    `Run of ${when(results.at)} (\`BENCH_PARTS=startup pnpm bench\`, Node ${results.node}; load average at its start ${results.loadAverage.join(', ')}). ` +
      `Each process on ${results.stack}; time from spawn to the first 200 from \`/health/ready\` (the worker's on its metrics listener: ` +
      'it answers once its queues are connected), and the resident memory of the process and its children (pnpm, tsx) at that moment. ' +
      `\`pnpm build\` ran first. ${results.rounds} rounds after one untimed start of each; the ways alternate within a round, in a rotating order; medians. ` +
      '"Empty cache" is a new container: tsx keeps what it transpiled under the temp dir, which a new container does not have.',
    '',
    table(['Process', 'How it starts', 'Ready (median)', 'Range', 'vs the image before', 'vs tsx warm', 'RSS (median)'], lines, [
      'l',
      'l',
      'r',
      'r',
      'r',
      'r',
      'r',
    ]),
    '',
    ...(check ? [`Target: ${check.target}: ${check.measured}: ${verdict(check.met)}.`, ''] : []),
    'Against tsx with its cache warm (a restart of the same container, or `pnpm dev`) the built code takes about 0.6 of the time: what is left is ' +
      "Node loading well over a thousand modules (knex alone loads some 250 of lodash's files; inversify, BullMQ, zod, mysql2 and ioredis follow) and " +
      'the connections and checks before ready. The queue dashboard, file-type and Handlebars load only when used, for that reason.',
    '',
  ];
}
