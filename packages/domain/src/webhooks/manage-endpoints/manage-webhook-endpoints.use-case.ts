import type { ClockPort } from '../../ports/clock.port.js';
import type { EventFeedPort } from '../../ports/event-feed.port.js';
import type { HostResolverPort } from '../../ports/host-resolver.port.js';
import type { SecretCipherPort } from '../../ports/secret-cipher.port.js';
import type { WebhookTargetPolicyPort } from '../../ports/webhook-target-policy.port.js';
import type { WebhookEndpointRepositoryPort } from '../../ports/webhook-endpoint-repository.port.js';
import type { WebhookSignerPort } from '../../ports/webhook-signer.port.js';
import { ValidationError } from '../../shared/common.errors.js';
import { refuseLostCursor } from '../../events/feed-cursor.js';
import { checkWebhookUrl, isForbiddenAddress } from '../webhook-target.rules.js';
import { SECRET_OVERLAP_SECONDS, type WebhookDelivery, type WebhookEndpoint } from '../webhook-endpoint.js';
import { WebhookEndpointNotFoundError, WebhookReplayRunningError } from '../webhooks.errors.js';
import { parseCreateWebhookEndpoint, parseListDeliveriesQuery, parseReplayWebhook, parseUpdateWebhookEndpoint } from './webhook-endpoint.input.js';

export const FORBIDDEN_TARGET_MESSAGE = 'The url must not point to a private, loopback or link-local address.';

/**
 * The client's side of webhooks: endpoints (with the secret shown once),
 * rotation, attempts, replay. Every call is scoped to the client directory;
 * another directory's endpoint is missing (404).
 */
export class ManageWebhookEndpointsUseCase {
  constructor(
    private readonly deps: {
      endpoints: WebhookEndpointRepositoryPort;
      feed: EventFeedPort;
      resolver: HostResolverPort;
      signer: WebhookSignerPort;
      /** Seals new secrets before they are stored. */
      cipher: SecretCipherPort;
      clock: ClockPort;
      maxEndpoints: number;
      /** WEBHOOK_ALLOW_PRIVATE_TARGETS: every directory may aim at private targets. */
      allowPrivateTargets: boolean;
      /** Else only the directories the operator allowed. */
      targetPolicy: WebhookTargetPolicyPort;
    },
  ) {}

  async create(directory: string, body: unknown): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const input = parseCreateWebhookEndpoint(body);
    await this.checkTarget(directory, input.url);
    const secret = this.deps.signer.newSecret();
    const endpoint = await this.deps.endpoints.create(
      { directory, ...input, secret: this.deps.cipher.seal(secret), created: this.nowSeconds() },
      this.deps.maxEndpoints,
    );
    if (!endpoint) throw new ValidationError(`A client directory may have at most ${this.deps.maxEndpoints} webhook endpoints.`);
    return { endpoint, secret };
  }

  list(directory: string): Promise<WebhookEndpoint[]> {
    return this.deps.endpoints.list(directory);
  }

  async get(directory: string, id: number): Promise<WebhookEndpoint> {
    return (await this.deps.endpoints.find(directory, id)) ?? notFound();
  }

  async update(directory: string, id: number, body: unknown): Promise<WebhookEndpoint> {
    await this.get(directory, id);
    const changes = parseUpdateWebhookEndpoint(body);
    if (changes.url !== undefined) await this.checkTarget(directory, changes.url);
    return (await this.deps.endpoints.update(directory, id, changes)) ?? notFound();
  }

  async remove(directory: string, id: number): Promise<void> {
    if (!(await this.deps.endpoints.remove(directory, id))) notFound();
  }

  async rotateSecret(directory: string, id: number): Promise<string> {
    const secret = this.deps.signer.newSecret();
    if (!(await this.deps.endpoints.rotateSecret(directory, id, this.deps.cipher.seal(secret), this.nowSeconds() + SECRET_OVERLAP_SECONDS))) notFound();
    return secret;
  }

  async deliveries(
    directory: string,
    id: number,
    query: Iterable<[string, string]>,
  ): Promise<{ deliveries: WebhookDelivery[]; hasMore: boolean; nextAfter: number | null }> {
    await this.get(directory, id);
    const { before, limit } = parseListDeliveriesQuery(query);
    const found = await this.deps.endpoints.listDeliveries(directory, id, before, limit + 1);
    const deliveries = found.slice(0, limit);
    return { deliveries, hasMore: found.length > limit, nextAfter: deliveries.at(-1)?.id ?? before };
  }

  /**
   * Schedules every kept event past `after` again; a cursor retention has passed, or one from before a restore, is 410, as in the feed; while an
   * earlier replay is still being sent, 409 (replays cannot be stacked behind a slow endpoint).
   */
  async replay(directory: string, id: number, body: unknown): Promise<{ scheduled: number }> {
    await this.get(directory, id);
    const { after } = parseReplayWebhook(body);
    refuseLostCursor(after, await this.deps.feed.cursorMarks(directory));
    const scheduled = await this.deps.endpoints.replay(directory, id, after, this.nowSeconds());
    if (scheduled === 'running') throw new WebhookReplayRunningError();
    return { scheduled };
  }

  /** The URL's rules, then every address its host resolves to (the connected address is checked again at each delivery). */
  private async checkTarget(directory: string, url: string): Promise<void> {
    const allowPrivateTargets = this.deps.allowPrivateTargets || (await this.deps.targetPolicy.allowsPrivateTargets(directory));
    const checked = checkWebhookUrl(url, { allowPrivateTargets });
    if (!checked.ok) throw ValidationError.invalidData({ url: [checked.message] });
    if (allowPrivateTargets || checked.ipLiteral) return;
    // A name that does not resolve now (or whose lookup fails) is accepted: what counts is the address each delivery connects to.
    const addresses = await this.deps.resolver.resolve(checked.host).catch(() => [] as string[]);
    if (addresses.some(isForbiddenAddress)) throw ValidationError.invalidData({ url: [FORBIDDEN_TARGET_MESSAGE] });
  }

  private nowSeconds(): number {
    return Math.floor(this.deps.clock.now().getTime() / 1000);
  }
}

function notFound(): never {
  throw new WebhookEndpointNotFoundError();
}
