import type { Client } from '@logi/domain';
import type { Logger } from 'pino';

/** What middleware leaves on ctx.state for the routes. */
export interface AppState {
  requestId: string;
  log: Logger;
  /** The authenticated client; set before any client route runs. */
  client: Client;
  /** Set when the credentials were checked and found valid, before rate limiting. */
  authenticated?: Client | null;
}
