import type { EstateContext } from '../../api/context.ts';
import type { RawRoute } from '../handler.ts';
import { serveHqWork } from './hq-work-page.ts';
import { serveStatus } from './status-page.ts';

/** The two HTML pages: GET /status and GET /hq/work (public, self-contained, strict CSP). */
export function pageRoutes(ctx: EstateContext): RawRoute[] {
  return [
    { method: 'GET', path: '/status', handle: (req, res) => serveStatus(ctx, req, res) },
    { method: 'GET', path: '/hq/work', handle: (req, res) => serveHqWork(ctx, req, res) },
  ];
}
