import type { ServerResponse } from 'node:http';
import type { EstateError } from '../errors.ts';

// Which answers refused a request to protect the server (EstateError's
// `overload`: a bound reached, load shed), so /metrics counts those as
// `overloaded` and not every 503 (a store that is down is not an overload).

const refused = new WeakSet<ServerResponse>();

/** Notes that `res` answers `err`, if `err` is an overload refusal. */
export function noteRefusal(res: ServerResponse, err: EstateError): void {
  if (err.overload) refused.add(res);
}

/** Whether `res` answered an overload refusal. */
export function wasOverloadRefusal(res: ServerResponse): boolean {
  return refused.has(res);
}
