import type Router from '@koa/router';
import { envelope, type ListEventsUseCase } from '@logi/domain';
import type { AppState } from '../http/app-state.js';
import { queryPairs } from '../http/path-id.js';
import { toEventPageDto } from '../mappers/event.mapper.js';

export interface EventRouteDeps {
  listEvents: ListEventsUseCase;
}

export function registerEventRoutes(router: Router<AppState>, deps: EventRouteDeps): void {
  router.get('/events', async (ctx) => {
    // A long poll ends as soon as the client goes away, so a closed connection holds nothing.
    const gone = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableFinished) gone.abort();
    };
    ctx.res.once('close', onClose);
    try {
      const page = await deps.listEvents.execute({ directory: ctx.state.client.directory, query: queryPairs(ctx.querystring), signal: gone.signal });
      ctx.body = envelope(200, 'OK', toEventPageDto(page));
    } finally {
      ctx.res.off('close', onClose);
    }
  });
}
