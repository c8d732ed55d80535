import type { Middleware, ParameterizedContext } from 'koa';
import { IDEMPOTENCY_HEADER, idempotencyKeyErrors, runIdempotently, ValidationError, type IdempotencyStorePort, type SecretCipherPort } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { requestBody } from '../http/json-body.js';

/** A route's context: its path parameters, as @koa/router sets them. */
type RoutedContext = ParameterizedContext<AppState> & { params: Record<string, string> };

/** Sent, as `true`, on the kept answer of an earlier request with the same Idempotency-Key. */
export const REPLAYED_HEADER = 'Idempotency-Replayed';

/** What the routes that create something need to honour `Idempotency-Key`. */
export interface IdempotencyDeps {
  idempotency: IdempotencyStorePort;
  /** Seals answers that hold a secret (a webhook endpoint's) before they are kept. */
  secretCipher: SecretCipherPort;
}

/** The answer a retry gets again: status, envelope, and the headers that say where the thing made is. */
interface KeptAnswer {
  status: number;
  body: unknown;
  location?: string;
}

/** As kept: the answer itself, or sealed when it holds a secret. */
type StoredAnswer = KeptAnswer | { sealed: string };

/** Longer than any of these requests runs (a webhook URL's name look-up included), so a live request never loses its key. */
const LOCK_MS = 120_000;

/**
 * `Idempotency-Key` on a JSON route that creates something (contract
 * "`Idempotency-Key`": exports, webhook endpoints, file links), as uploads
 * take it: up to 255 visible ASCII characters, scoped to the client
 * directory, the first answer (status and body) kept 24 h. A retry with the
 * same key, path and body gets that answer again with `Idempotency-Replayed:
 * true` and creates nothing; the same key with another path or body is 422
 * naming the header; the same request still running elsewhere is 409 with
 * `Retry-After` (two at once: one creates, the other waits or replays). An
 * answer that fails (a 4xx or 5xx thrown) keeps nothing, so its retry runs
 * anew. Placed after the body is parsed, before the handler.
 *
 * `secret: true`: the answer's `data.secret` is a secret (a webhook signing
 * secret, never stored in clear). The kept answer is sealed with the secrets
 * cipher and a retry gets the secret again, as Stripe's do; a process with no
 * secrets key (which a current release does not start without, ADR 0043)
 * keeps the answer with `secret` null instead.
 */
export function idempotent(
  deps: IdempotencyDeps,
  options: {
    secret?: boolean;
    /** Throws what must come before a 422 on the key (contract precedence: a missing order or file is 404 first). */
    exists?: (ctx: RoutedContext) => Promise<void>;
  } = {},
): Middleware<AppState> {
  return async (ctx, next) => {
    // An empty value counts as not sent, as for every parameter.
    const key = ctx.get(IDEMPOTENCY_HEADER) || undefined;
    if (key === undefined) {
      await next();
      return;
    }
    await options.exists?.(ctx as RoutedContext);
    const errors = idempotencyKeyErrors(key);
    const first = Object.values(errors)[0]?.[0];
    if (first) throw new ValidationError(first, errors);

    const fingerprint = canonicalJson({ method: ctx.method, path: ctx.path, body: requestBody(ctx) });
    const { value, replayed } = await runIdempotently(
      deps.idempotency,
      { directory: ctx.state.client.directory, key },
      fingerprint,
      { lockMs: LOCK_MS },
      async (): Promise<StoredAnswer> => {
        await next();
        const answer: KeptAnswer = { status: ctx.status, body: ctx.body, ...(ctx.response.get('Location') ? { location: ctx.response.get('Location') } : {}) };
        if (!options.secret) return answer;
        return deps.secretCipher.keyIds.length > 0 ? { sealed: deps.secretCipher.seal(JSON.stringify(answer)) } : withoutSecret(answer);
      },
    );
    if (!replayed) return;
    const answer = 'sealed' in value ? (JSON.parse(deps.secretCipher.open(value.sealed)) as KeptAnswer) : value;
    ctx.status = answer.status;
    ctx.body = answer.body;
    if (answer.location) ctx.set('Location', answer.location);
    ctx.set(REPLAYED_HEADER, 'true');
  };
}

function withoutSecret(answer: KeptAnswer): KeptAnswer {
  const body = answer.body as { data?: Record<string, unknown> | null } | null;
  if (!body?.data || !('secret' in body.data)) return answer;
  return { ...answer, body: { ...body, data: { ...body.data, secret: null } } };
}

/** JSON with object keys sorted, so a retry that orders its members otherwise is the same request. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
