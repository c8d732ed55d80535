import type { ApiKeyScope, Client } from '@logi/domain';
import type { Logger } from 'pino';

/** What middleware leaves on ctx.state for the routes. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** The authenticated client; set before any client route runs. */
  client: Client;
  /** The key the client called with (its id for the request log; its scopes were checked by the gate). */
  apiKey?: { id: number; scopes: readonly ApiKeyScope[] };
  /** Set when the credentials were checked and found valid, before rate limiting. */
  authenticated?: Client | null;
}
