import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

// A small real hub for the collector's tests: HTTP on 127.0.0.1 speaking
// POST /ingest (DESIGN.md 7a: {"samples": [...]} → {"stored", "duplicates"}),
// keeping each sample once by node and ts, as the real hub does. What it
// answers can be changed between requests; it can be stopped and started
// again on the same port (a hub that goes away and comes back).

/** What the hub does with the next request: store and answer, answer with a status, store and drop the answer, or hold it. */
export type HubMode =
  | { kind: 'store' }
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'store-then-drop' }
  | { kind: 'hold' };

export interface FakeHub {
  url: string;
  /** The ts of each sample stored, in the order stored (each once). */
  stored: string[];
  /** Samples received again after they were stored. */
  duplicates: number;
  /** Every POST /ingest received: its batch's ts list and X-API-Key. */
  requests: { ts: string[]; apiKey: string | undefined }[];
  /** The mode for requests from now on; `refuse` (a ts → a 422 naming that sample) applies in `store` mode. */
  mode: HubMode;
  refuse: Set<string>;
  /** Whether 422s name the sample (loc ["body", "samples", i, ...]) or only the body. */
  namesRefused: boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
}

export async function startFakeHub(t: Pick<TestContext, 'after'>): Promise<FakeHub> {
  let server: Server | undefined;
  let port = 0;
  const seen = new Set<string>();
  const hub: FakeHub = {
    url: '',
    stored: [],
    duplicates: 0,
    requests: [],
    mode: { kind: 'store' },
    refuse: new Set(),
    namesRefused: true,
    stop: () =>
      new Promise<void>((resolve) => {
        if (!server) return resolve();
        const s = server;
        server = undefined;
        s.closeAllConnections();
        s.close(() => resolve());
      }),
    start: async () => {
      server = createServer((req, res) => void handle(req, res));
      await new Promise<void>((resolve, reject) => {
        server!.once('error', reject);
        server!.listen(port, '127.0.0.1', () => resolve());
      });
      port = (server.address() as AddressInfo).port;
      hub.url = `http://127.0.0.1:${port}`;
    },
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    const samples = (JSON.parse(text) as { samples: { trend: { ts: string; node: string } }[] }).samples;
    hub.requests.push({ ts: samples.map((s) => s.trend.ts), apiKey: req.headers['x-api-key'] as string | undefined });
    const mode = hub.mode;
    if (mode.kind === 'hold') return;
    if (mode.kind === 'status') return send(res, mode.status, mode.body ?? { detail: `status ${mode.status}` }, mode.headers);
    const refused = samples.findIndex((s) => hub.refuse.has(s.trend.ts));
    if (refused >= 0) {
      const loc = hub.namesRefused ? ['body', 'samples', refused, 'trend', 'ts'] : ['body'];
      return send(res, 422, { detail: [{ loc, msg: 'more than 5 minutes in the future', type: 'value_error' }] });
    }
    let stored = 0;
    for (const s of samples) {
      const key = `${s.trend.node}\n${s.trend.ts}`;
      if (seen.has(key)) hub.duplicates++;
      else {
        seen.add(key);
        hub.stored.push(s.trend.ts);
        stored++;
      }
    }
    if (mode.kind === 'store-then-drop') return req.socket.destroy();
    send(res, 200, { stored, duplicates: samples.length - stored });
  };

  await hub.start();
  t.after(() => hub.stop());
  return hub;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
