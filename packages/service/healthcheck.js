// The image's HEALTHCHECK (`node healthcheck.js`): exit 0 when this container's process is live.
// The API answers /health/live on PORT; a worker, which listens on no PORT, answers it on its
// metrics listener (METRICS_PORT, so a worker container needs metrics on to report health).
const ports = [process.env.PORT || '3000', process.env.METRICS_PORT || '9464'];

for (const port of ports) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health/live`, { signal: AbortSignal.timeout(4_000) });
    process.exit(response.ok ? 0 : 1);
  } catch (error) {
    // Nothing listens there: this is the other kind of process, try the next port.
    if (/** @type {{ cause?: { code?: string } } | undefined} */ (error)?.cause?.code !== 'ECONNREFUSED') process.exit(1);
  }
}
process.exit(1);
