import { presentedCredential } from '../credentials.ts';
import { authorize, type HandlerOptions, type RawRoute } from '../handler.ts';
import { sendText } from '../send.ts';
import type { ServerMetrics } from './server-metrics.ts';

/** What the route asks of a credential (its RouteDoc, `system.metrics` in docs-routes.ts, says the same). */
const ACCESS = { access: 'protected', scope: 'metrics', method: 'GET', path: '/metrics' } as const;

/** GET /metrics: the server's metrics, to a credential with the `metrics` (or `read`) scope; never cached. */
export function metricsRoute(metrics: ServerMetrics, auth: Pick<HandlerOptions, 'authenticate' | 'onAuthFailed'>): RawRoute {
  return {
    method: 'GET',
    path: ACCESS.path,
    async handle(req, res) {
      const url = req.url ?? '';
      const q = url.indexOf('?');
      await authorize(ACCESS, auth, presentedCredential(req, new URLSearchParams(q === -1 ? '' : url.slice(q + 1))), ACCESS.path);
      const { contentType, text } = await metrics.render(req.headers.accept);
      sendText(req, res, 200, contentType, text, { 'Cache-Control': 'no-store' });
    },
  };
}
