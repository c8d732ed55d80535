// packages/client/examples/events-example.ts (compiled by the tests)
import { createServer } from 'node:http';
import { createClient, EventsExpiredError, verifyWebhook, WebhookVerificationError } from '@logi/client';

const api = createClient({ baseUrl: 'http://127.0.0.1:3000/v1', token: 'demo-key-baltic', clientDirectory: 'baltic-haulage', retry: true });

// Pull: every change past the saved cursor, in order, long-polling (wait: 30 s) while there is none.
const stop = new AbortController();
process.once('SIGINT', () => stop.abort());
const feed = api.events.follow({ after: 0, types: ['invoice.created', 'invoice.updated'], signal: stop.signal });
try {
  for await (const event of feed) {
    if (event.type === 'invoice.updated') console.log(event.data.object.nr, event.data.previous_attributes);
    console.log('save cursor', feed.cursor); // resume later with follow({ after: cursor })
  }
} catch (error) {
  if (!(error instanceof EventsExpiredError)) throw error;
  console.log('the cursor cannot be followed: resync from an export (api.exports.create), then follow from its events_cursor');
}

// Push: an endpoint, and a receiver that checks each delivery's signature before trusting it.
const { secret } = await api.webhooks.create({ url: 'https://erp.example.com/hooks/logi', event_types: ['invoice.updated'] });
createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      const event = verifyWebhook(Buffer.concat(chunks), req.headers, secret);
      console.log(event.id, event.type); // deduplicate by event.id: delivery is at least once
      res.writeHead(204).end();
    } catch (error) {
      res.writeHead(error instanceof WebhookVerificationError ? 400 : 500).end();
    }
  });
}).listen(8080);
