import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import type { EstateContext } from '../api/context.ts';
import { repeatedNames, repeatedParamIssues } from '../api/parse-input.ts';
import { toValidationIssues } from '../api/validation-issues.ts';
import { optionalSlugField } from '../api/text-fields.ts';
import type { JsonRecord } from '../core/jsonl/parse-record.ts';
import { completionsSince } from '../core/work.ts';
import type { Authenticator } from '../core/keys/authenticator.ts';
import { EstateError, validationError } from '../errors.ts';
import { presentedSecret } from './credentials.ts';
import type { RawRoute } from './handler.ts';
import { clientKey as requestClient } from './rate-limit.ts';

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
// (the CLI, cron jobs, other replicas) through the store's subscription
// (KeyedRecords.subscribe). A comment line every
// 15 s keeps proxies from closing an idle stream.
//
// One client (its credential when it presents a valid one, else its address,
// IPv6 by /64) holds at most `perClient` streams: one more is 429 with
// `Retry-After`. A stream ends after `maxLifetimeMs`: it first names the last
// completion it carried (an `id:` line alone, which sets the client's
// Last-Event-ID without an event) and a `retry:` delay, so the client
// reconnects and resumes where it was; nothing is lost across the reconnect.

export const MAX_REPLAY = 1000;
const MAX_BUFFERED_BYTES = 1024 * 1024;
/** Seconds a client over its stream cap is told to wait. */
const CAP_RETRY_AFTER_S = 5;

const streamQuery = z.object({
  board: optionalSlugField('Only completions of this board.'),
  after: z.string().min(1).max(128).optional(),
});

interface Client {
  res: ServerResponse;
  board: string | undefined;
  /** Live records held back while the replay is being read (undefined once it is sent). */
  held: JsonRecord[] | undefined;
  /** Where a reconnecting client resumes: the id of the last completion sent, else where the stream began. */
  lastId: string | undefined;
}

export interface WorkStreamOptions {
  heartbeatMs?: number;
  maxClients?: number;
  /** Streams one client may hold at once (default 8). */
  perClient?: number;
  /** How long a stream lasts before the client is asked to reconnect (default 1 h; each stream a little less, at random, so reconnects spread). */
  maxLifetimeMs?: number;
  /** Tells a credential's holder from an anonymous client; without it every client is its address. */
  authenticate?: Authenticator;
  /** Called with watcher failures, which never stop the server. */
  onError?: (err: unknown) => void;
}

export interface WorkStream {
  route: RawRoute;
  /** Ends every open stream, ends the store subscription and refuses new streams. */
  close: () => Promise<void>;
  /** The streams open now. */
  open: () => number;
}

export function createWorkStream(ctx: EstateContext, options: WorkStreamOptions = {}): WorkStream {
  const log = ctx.store.completions;
  const clients = new Set<Client>();
  /** Streams open or opening, in all and per client key. */
  let opening = 0;
  const perKey = new Map<string, number>();
  const perClient = options.perClient ?? 8;
  const maxLifetimeMs = options.maxLifetimeMs ?? 3_600_000;
  const onError = options.onError ?? (() => {});
  let started: Promise<void> | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let unsubscribe: (() => Promise<void>) | undefined;
  let closed = false;

  const refresh = () => void log.refresh().catch(onError);

  const broadcast = (records: JsonRecord[]) => {
    for (const client of clients) {
      if (client.held) client.held.push(...records);
      else send(client, records);
    }
  };

  /** Subscribes to the store's completions (every writer's); resolves once live. */
  const start = () =>
    (started ??= (async () => {
      try {
        unsubscribe = await log.subscribe(broadcast, onError);
      } catch (err) {
        // The next stream tries again.
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
    const shown = records.filter((r) => client.board === undefined || r.board === client.board);
    if (!shown.length) return;
    // The id goes on a line of its own: no line break may end it early (data is JSON, which has none).
    write(client, shown.map((r) => `event: completion\nid: ${eventId(r.id)}\ndata: ${JSON.stringify(r)}\n\n`).join(''));
    client.lastId = String(shown.at(-1)?.id);
  };

  /** Ends a stream at the end of its life, telling the client where to resume and when to reconnect. */
  const retire = (client: Client) => {
    if (!clients.has(client)) return;
    const resume = client.lastId === undefined ? '' : `id: ${eventId(client.lastId)}\n`;
    write(client, `${resume}retry: ${1000 + Math.floor(Math.random() * 2000)}\n\n`);
    clients.delete(client);
    client.res.end();
  };

  /** The key a client's streams are counted under: its valid credential, else its address. */
  const clientKey = async (req: IncomingMessage, query: URLSearchParams): Promise<string> => {
    const secret = presentedSecret(req, query);
    const principal = secret && options.authenticate ? await options.authenticate(secret) : undefined;
    return requestClient(req, principal);
  };

  /** Takes a stream slot of `key`, or throws 503 (the server is full) or 429 (this client is); the returned function frees it. */
  const reserve = (key: string): (() => void) => {
    if (opening >= (options.maxClients ?? 200)) throw new EstateError('unavailable', 'too many open streams; try again later', { headers: { 'Retry-After': '5' }, overload: true });
    const held = perKey.get(key) ?? 0;
    if (held >= perClient) {
      throw new EstateError('rate_limited', `this client already has ${held} open streams (at most ${perClient}); close one or try again later`, {
        headers: { 'Retry-After': String(CAP_RETRY_AFTER_S) },
      });
    }
    opening++;
    perKey.set(key, held + 1);
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      opening--;
      const left = (perKey.get(key) ?? 1) - 1;
      if (left > 0) perKey.set(key, left);
      else perKey.delete(key);
    };
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (closed) throw new EstateError('unavailable', 'the server is shutting down');
    const url = new URL(req.url ?? '/', 'http://localhost');
    const parsed = streamQuery.safeParse(Object.fromEntries(url.searchParams));
    const repeated = repeatedParamIssues(streamQuery, repeatedNames(url.searchParams));
    if (!parsed.success || repeated.length) throw validationError([...(parsed.success ? [] : toValidationIssues('query', parsed.error.issues)), ...repeated]);
    const lastEventId = req.headers['last-event-id'];
    const cursor = typeof lastEventId === 'string' && lastEventId ? lastEventId.slice(0, 128) : parsed.data.after;
    const free = reserve(await clientKey(req, url.searchParams));
    res.once('close', free);
    try {
      await start();
      await log.refresh();
    } catch (err) {
      free();
      throw err;
    }
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
    const client: Client = { res, board: parsed.data.board, held: [], lastId: cursor };
    clients.add(client);
    const lifetime = setTimeout(() => retire(client), Math.ceil(maxLifetimeMs * (0.9 + Math.random() * 0.1)));
    lifetime.unref();
    res.on('close', () => {
      clearTimeout(lifetime);
      clients.delete(client);
    });
    res.write('retry: 3000\n\n');

    // Without a cursor the stream begins at the newest completion now: a client that reconnects resumes from there.
    let replay: JsonRecord[] = [];
    if (cursor === undefined) {
      const newest = await log.newest(1).catch(onError);
      if (newest) client.lastId = newest.records[0] === undefined ? 'start' : String(newest.records[0].id);
    } else {
      replay = (await completionsSince(log, cursor, MAX_REPLAY, client.board).catch(onError)) ?? [];
    }
    const sent = new Set(replay.map((r) => r.id));
    const held = client.held ?? [];
    client.held = undefined;
    if (!clients.has(client)) return;
    send(client, [...replay, ...held.filter((r) => !sent.has(r.id))]);
  };

  return {
    route: { method: 'GET', path: '/work/stream', handle },
    open: () => clients.size,
    close: async () => {
      closed = true;
      if (heartbeat) clearInterval(heartbeat);
      for (const client of clients) client.res.end();
      clients.clear();
      await started?.catch(() => {});
      await unsubscribe?.();
    },
  };
}

/** An event id as one line: no line break may end it early. */
function eventId(id: unknown): string {
  return String(id).replace(/[\r\n\0]/g, '');
}
