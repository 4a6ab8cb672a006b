/**
 * Routes anyone who can reach the port may call: probes, the scrape endpoint and the API's own
 * documentation. Matched on the route pattern Fastify resolved, not the raw URL, so no spelling of
 * a path (encoding, dot segments) can reach a protected route through this list.
 */
export function isPublicRoute(routePattern: string | undefined): boolean {
  if (routePattern === undefined) return false;
  return (
    routePattern === '/health/live' ||
    routePattern === '/health/ready' ||
    routePattern === '/metrics' ||
    routePattern === '/docs' ||
    routePattern.startsWith('/docs/')
  );
}
