/**
 * Routes anyone who can reach the port may call: probes, the scrape endpoint, the API's own
 * documentation and the playground page with its assets (the page asks for a key itself). Matched on the route pattern Fastify resolved, not the raw URL, so no spelling of
 * a path (encoding, dot segments) can reach a protected route through this list.
 */
export function isPublicRoute(routePattern: string | undefined): boolean {
  if (routePattern === undefined) return false;
  return (
    routePattern === '/health/live' ||
    routePattern === '/health/ready' ||
    routePattern === '/metrics' ||
    routePattern === '/' ||
    routePattern === '/assets/:name' ||
    routePattern === '/docs' ||
    routePattern.startsWith('/docs/')
  );
}
