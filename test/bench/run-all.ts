/** `pnpm bench`: every benchmark, one after the other (they share two cores). */
await import('./pdf-render.bench.js');
await import('./invoice-list.bench.js');
