import type Router from '@koa/router';

/** The label for requests that match no route: raw paths would make one series per URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * The route pattern a request belongs to (`/v1/invoices/:invoiceId/pdf`),
 * whatever its outcome: a 401 or 429 never reaches the router, a 405 matches
 * the path but not the method, and all of them still name the route.
 */
export function routePattern(routers: readonly Router[], path: string, method: string): string {
  let pathOnly: string | null = null;
  for (const router of routers) {
    const match = router.match(path, method);
    const exact = match.pathAndMethod.find((layer) => layer.methods.length > 0);
    if (exact) return String(exact.path);
    const known = match.path.find((layer) => layer.methods.length > 0);
    pathOnly ??= known ? String(known.path) : null;
  }
  return pathOnly ?? UNMATCHED_ROUTE;
}
