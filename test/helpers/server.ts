import type { TestContext } from 'node:test';
import { createContext, type EstateContext } from '../../src/api/context.ts';
import { loadConfig, serveSettings } from '../../src/config.ts';
import { createKey } from '../../src/core/keys/key-store.ts';
import { createApp } from '../../src/server/create-app.ts';
import { listen, type ListenOptions, listenLimits } from '../../src/server/listen.ts';
import { PATIENCE_MS } from './wait-until.ts';

export interface TestServer {
  url: string;
  ctx: EstateContext;
  /** fetch against the server: `get('/trends?limit=5', { 'X-API-Key': key })`. */
  get: (path: string, headers?: Record<string, string>) => Promise<TestResponse>;
  request: (method: string, path: string, options?: { headers?: Record<string, string>; body?: string | object }) => Promise<TestResponse>;
  /** Closes the server as the test's end does, once: resolves after its background writes (keys' last use) have ended. */
  stop: () => Promise<void>;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  json: any;
}

/** The real estate server on 127.0.0.1, port 0, closed after the test. */
export async function startServer(
  t: Pick<TestContext, 'after'>,
  dataDir: string,
  options: {
    envApiKey?: string;
    now?: () => Date;
    /** Receives every log line: access lines, client errors, warnings. */
    log?: (line: Record<string, unknown>) => void;
    env?: NodeJS.ProcessEnv;
    /** Overrides of the listen options the data dir's config asks for (timeouts, max connections). */
    listen?: Partial<Pick<ListenOptions, 'timeouts' | 'maxConnections'>>;
  } = {},
): Promise<TestServer> {
  // `env` holds the secrets the config names (FORGEJO_TOKEN…); by default none, whatever the test runner's environment.
  const config = loadConfig(dataDir);
  const ctx = createContext(dataDir, config, options.env ?? {});
  if (options.now) ctx.now = options.now;
  const app = createApp(ctx, { envApiKey: options.envApiKey, log: options.log });
  const onClientError = options.log ? app.log : undefined;
  const running = await listen(app, { host: '127.0.0.1', port: 0, ...listenLimits(serveSettings(config)), ...options.listen, onClientError });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      await app.closeStreams();
      await running.close();
      await app.close();
      await ctx.store.close();
    })());
  t.after(stop);
  const request: TestServer['request'] = async (method, path, opts = {}) => {
    const body = opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const headers = { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...opts.headers };
    return readResponse(await fetch(running.url + path, { method, headers, body, signal: AbortSignal.timeout(PATIENCE_MS) }));
  };
  return { url: running.url, ctx, request, get: (path, headers) => request('GET', path, { headers }), stop };
}

/** A fetch Response as a TestResponse: its text, and its JSON when it is JSON. */
export async function readResponse(res: Response): Promise<TestResponse> {
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** The secret part of an API key `est_<12 hex>_<secret>` (its alphabet has `_`: never split the key on it). */
export function keySecret(key: string): string {
  return key.slice('est_'.length + 12 + 1);
}

/** A new API key of `user` in the data dir. */
export async function newKey(dataDir: string, user = 'alice'): Promise<string> {
  return (await createKey(dataDir, { userId: user })).key;
}
