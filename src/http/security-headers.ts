import type { FastifyHelmetOptions } from '@fastify/helmet';

/**
 * Helmet's defaults, which also suit the documentation UI (its scripts are files under /docs, its
 * styles inline). `upgrade-insecure-requests` is dropped: the server speaks plain HTTP, and a
 * browser told to upgrade would fetch the UI's files over an https:// that does not exist.
 */
export const SECURITY_HEADERS: FastifyHelmetOptions = {
  contentSecurityPolicy: { directives: { upgradeInsecureRequests: null } },
};
