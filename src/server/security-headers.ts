/**
 * Headers of every response estate sends, errors, 304s and raw 400s
 * included: no sniffing, no referrer, and a CSP under which nothing may
 * frame a response or run it as a page. A page that needs more (its own
 * scripts and styles) sends its own CSP, which replaces this one.
 */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'X-Frame-Options': 'DENY',
};
