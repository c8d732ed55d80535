import net from 'node:net';

/**
 * A port nobody listens on right now (the OS picks it, the listener is closed again before it is
 * handed out), for a listener under test or an address where nothing answers; no vitest, so scripts can use it.
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
