/**
 * The page's policy: everything it loads is a file of its own (no inline script or style, so an
 * answer that smuggled markup into the DOM still could not run), it talks to this origin only, and
 * no other site may frame it.
 */
export const PLAYGROUND_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');
