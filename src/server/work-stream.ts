import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { EstateContext } from '../api/context.ts';
import { toValidationIssues } from '../api/validation-issues.ts';
import { optionalSlugField } from '../api/text-fields.ts';
import type { JsonRecord } from '../core/jsonl/parse-record.ts';
import { watchLog, type LogWatcher } from '../core/watch-log.ts';
import { completionsSince } from '../core/work.ts';
import { EstateError, validationError } from '../errors.ts';
import type { RawRoute } from './handler.ts';

// GET /work/stream: new work completions as server-sent events.
//
//   event: completion
//   id: wc_5f6db8edd0285ef0
//   data: {"id":"wc_5f6db8edd0285ef0","task_id":"EST-393",…}
//
// A client resumes after the completion it saw last with `Last-Event-ID`
// (browsers send it when they reconnect) or `?after=<id>`; `?after=start`
// replays the log from its start. At most the newest 1000 are replayed; an
// unknown id replays nothing. `?board=` keeps one board. Completions appear
// whoever writes them: this server's own writes at once, other processes'
// (the CLI, cron jobs) through a watcher on the log. A comment line every
// 15 s keeps proxies from closing an idle stream.

export const MAX_REPLAY = 1000;
const MAX_BUFFERED_BYTES = 1024 * 1024;

const streamQuery = z.object({
  board: optionalSlugField('Only completions of this board.'),
  after: z.string().min(1).max(128).optional(),
});

interface Client {
  res: ServerResponse;
  board: string | undefined;
  /** Live records held back while the replay is being read (undefined once it is sent). */
  held: JsonRecord[] | undefined;
}

export interface WorkStreamOptions {
  heartbeatMs?: number;
  maxClients?: number;
  /** Called with watcher failures, which never stop the server. */
  onError?: (err: unknown) => void;
}

export interface WorkStream {
  route: RawRoute;
  /** Ends every open stream, stops the watcher and refuses new streams. */
  close: () => Promise<void>;
}

export function createWorkStream(ctx: EstateContext, options: WorkStreamOptions = {}): WorkStream {
  const log = ctx.logs.completions;
  const clients = new Set<Client>();
  const onError = options.onError ?? (() => {});
  let started: Promise<void> | undefined;
  let watcher: LogWatcher | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribe: (() => void) | undefined;
  let closed = false;

  const refresh = () => void log.refresh().catch(onError);

  const broadcast = (records: JsonRecord[]) => {
    for (const client of clients) {
      if (client.held) client.held.push(...records);
      else send(client, records);
    }
  };

  /** Subscribes to the log and watches its file for other writers; resolves once watching. */
  const start = () =>
    (started ??= (async () => {
      unsubscribe = log.subscribe(broadcast);
      try {
        watcher = await watchLog(log.file, refresh, onError);
      } catch (err) {
        // The next stream tries again.
        unsubscribe();
        started = undefined;
        throw err;
      }
      if (closed) return;
      heartbeat = setInterval(() => {
        for (const client of clients) write(client, ': ping\n\n');
        // Also a fallback for a change the watcher missed (network file systems).
        refresh();
      }, options.heartbeatMs ?? 15_000);
      heartbeat.unref();
    })());

  const write = (client: Client, text: string) => {
    if (client.res.destroyed || client.res.writableEnded) {
      clients.delete(client);
      return;
    }
    if (client.res.writableLength > MAX_BUFFERED_BYTES) {
      // A client that does not read: let it go rather than hold its backlog.
      client.res.destroy();
      clients.delete(client);
      return;
    }
    client.res.write(text);
  };

  const send = (client: Client, records: readonly JsonRecord[]) => {
    const text = records
      .filter((r) => client.board === undefined || r.board === client.board)
      // The id goes on a line of its own: no line break may end it early (data is JSON, which has none).
      .map((r) => `event: completion\nid: ${String(r.id).replace(/[\r\n\0]/g, '')}\ndata: ${JSON.stringify(r)}\n\n`)
      .join('');
    if (text) write(client, text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (closed) throw new EstateError('unavailable', 'the server is shutting down');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parsed = streamQuery.safeParse(Object.fromEntries(url.searchParams));
    if (!parsed.success) throw validationError(toValidationIssues('query', parsed.error.issues));
    const lastEventId = req.headers['last-event-id'];
    const cursor = typeof lastEventId === 'string' && lastEventId ? lastEventId.slice(0, 128) : parsed.data.after;
    if (clients.size >= (options.maxClients ?? 200)) throw new EstateError('unavailable', 'too many open streams; try again later');

    await start();
    await log.refresh();
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    if (req.method === 'HEAD' || closed) {
      res.end();
      return;
    }
    req.socket.setNoDelay(true);
    const client: Client = { res, board: parsed.data.board, held: cursor === undefined ? undefined : [] };
    clients.add(client);
    res.on('close', () => clients.delete(client));
    res.write('retry: 3000\n\n');
    if (cursor === undefined) return;

    const replay = (await completionsSince(log, cursor, MAX_REPLAY, client.board).catch(onError)) ?? [];
    const sent = new Set(replay.map((r) => r.id));
    const held = client.held ?? [];
    client.held = undefined;
    if (!clients.has(client)) return;
    send(client, [...replay, ...held.filter((r) => !sent.has(r.id))]);
  };

  return {
    route: { method: 'GET', path: '/work/stream', handle },
    close: async () => {
      closed = true;
      if (heartbeat) clearInterval(heartbeat);
      for (const client of clients) client.res.end();
      clients.clear();
      unsubscribe?.();
      await started?.catch(() => {});
      await watcher?.close();
    },
  };
}
