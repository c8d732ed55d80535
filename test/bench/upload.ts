import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from 'minio';
import { BUCKET, type IoStack } from './io-stack.js';
import { log, median } from './progress.js';
import { multipart } from '../support/multipart.js';
import { stageCounters, stageMeans, type StageCounters } from './job-stages.js';

const MiB = 1024 * 1024;

export interface UploadRow {
  stack: string;
  case: string;
  files: number;
  bytes: number;
  rounds: number;
  apiMiBps: number;
  directMiBps: number;
  ratio: number;
  apiP50Ms: number;
  directP50Ms: number;
  /** Where the timed rounds' store jobs went, means per job (ms), from the job process's metrics; absent in runs before them. */
  stages?: StoreStages;
}

/** Means per store job over the timed rounds (ms): its wait in the queue (none inline) and its stages. */
export type StoreStages = ReturnType<typeof storeStages>;

const STORE_STAGES = ['lookup', 'check', 'commit'] as const;
const storeCounters = (port: number) => stageCounters(port, 'logistics_upload_store_stage_seconds', 'uploads');
const storeStages = (before: StageCounters, after: StageCounters) => stageMeans(before, after, STORE_STAGES);

/**
 * POST /v1/orders/{id}/files through the API against `putObject` of the same
 * bytes straight into the same S3 server (one PUT per file with its size,
 * one after the other), alternated round by round. Fresh random bytes every
 * round (no duplicate detection kicks in), each round on another order.
 */
export async function benchUpload(stacks: IoStack[], s3: Client, options: { rounds: number; orderIds: number[] }): Promise<UploadRow[]> {
  const cases = [
    { name: '1 × 10 MiB', files: 1, size: 10 * MiB },
    { name: '4 × 1 MiB', files: 4, size: MiB },
  ];
  const rows: UploadRow[] = [];
  let order = 0;
  for (const stack of stacks) {
    for (const c of cases) {
      const apiTimes: number[] = [];
      const directTimes: number[] = [];
      let counted: StageCounters = new Map();
      // One untimed round first (connections, bucket, temp dirs).
      for (let round = -1; round < options.rounds; round++) {
        const files = Array.from({ length: c.files }, () => randomBytes(c.size));
        const { body, contentType } = multipart([
          ...files.map((content, i) => ({ name: 'files', filename: `bench-${round}-${i}.bin`, content, type: 'application/octet-stream' })),
          { name: 'category_id', content: '1' },
        ]);
        const orderId = options.orderIds[order++ % options.orderIds.length]!;

        const apiStarted = process.hrtime.bigint();
        const answer = await stack.api.call({ method: 'POST', path: `/v1/orders/${orderId}/files`, body, headers: { 'Content-Type': contentType } });
        const apiMs = Number(process.hrtime.bigint() - apiStarted) / 1e6;
        if (answer.status !== 201) throw new Error(`${stack.api.label}: upload answered ${answer.status}: ${answer.body.toString('utf8').slice(0, 500)}`);
        const data = (JSON.parse(answer.body.toString('utf8')) as { data: { uploaded: unknown[]; failed: unknown[] } }).data;
        if (data.uploaded.length !== c.files || data.failed.length !== 0) {
          throw new Error(`${stack.api.label}: upload stored ${data.uploaded.length} of ${c.files} files: ${answer.body.toString('utf8').slice(0, 500)}`);
        }

        const directStarted = process.hrtime.bigint();
        for (const content of files) {
          await s3.putObject(BUCKET, `bench-direct/${randomUUID()}`, content, content.length, { 'Content-Type': 'application/octet-stream' });
        }
        const directMs = Number(process.hrtime.bigint() - directStarted) / 1e6;
        if (round >= 0) {
          apiTimes.push(apiMs);
          directTimes.push(directMs);
        } else {
          counted = await storeCounters(stack.jobMetricsPort);
        }
      }
      const stages = storeStages(counted, await storeCounters(stack.jobMetricsPort));
      const bytes = c.files * c.size;
      const apiP50 = median(apiTimes);
      const directP50 = median(directTimes);
      const row: UploadRow = {
        stack: stack.name,
        case: c.name,
        files: c.files,
        bytes,
        rounds: options.rounds,
        apiMiBps: bytes / MiB / (apiP50 / 1000),
        directMiBps: bytes / MiB / (directP50 / 1000),
        ratio: directP50 / apiP50,
        apiP50Ms: apiP50,
        directP50Ms: directP50,
        stages,
      };
      rows.push(row);
      log(
        `upload ${stack.name} ${c.name}: API ${row.apiMiBps.toFixed(1)} MiB/s (p50 ${apiP50.toFixed(0)} ms), ` +
          `putObject ${row.directMiBps.toFixed(1)} MiB/s (p50 ${directP50.toFixed(0)} ms) -> ${row.ratio.toFixed(2)}; ` +
          `store job means: wait ${stages.waitMs?.toFixed(1) ?? '-'} ms, lookup ${stages.lookup.toFixed(1)}, check ${stages.check.toFixed(1)}, commit ${stages.commit.toFixed(1)} (${stages.jobs} jobs)`,
      );
    }
  }
  return rows;
}
