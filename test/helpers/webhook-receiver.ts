import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { Webhook } from 'standardwebhooks';

// A webhook receiver as an operator would write one: a real node:http server
// on 127.0.0.1 (port 0, closed with its sockets after the test) that checks
// every request with the Standard Webhooks library's own Webhook.verify, and
// answers what the test tells it to.

export interface ReceivedWebhook {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The payload as Webhook.verify returned it; undefined when verification failed. */
  payload: { type: string; timestamp: string; data: { ts: string; kind: string; source: string; subject: string; message: string } } | undefined;
  /** What the receiver answered. */
  status: number;
}

export interface WebhookReceiver {
  url: string;
  secret: string;
  /** Every request received, in order. */
  received: ReceivedWebhook[];
  /** Those it answered 2xx. */
  accepted: () => ReceivedWebhook[];
  /** What it answers next (default 200): a status, or a function of the request. */
  answer: (how: number | ((w: Omit<ReceivedWebhook, 'status'>) => number)) => void;
  /** Stops listening (connections refused) until `start` again, on the same port. */
  close: () => Promise<void>;
  start: () => Promise<void>;
}

/** A fresh `whsec_` secret: 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export async function startReceiver(t: Pick<TestContext, 'after'>, secret = newWebhookSecret()): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let how: number | ((w: Omit<ReceivedWebhook, 'status'>) => number) = 200;
  const verifier = new Webhook(secret);
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const h = req.headers as IncomingHttpHeaders & Record<string, string>;
      let payload: ReceivedWebhook['payload'];
      try {
        payload = verifier.verify(body, { 'webhook-id': h['webhook-id'] ?? '', 'webhook-timestamp': h['webhook-timestamp'] ?? '', 'webhook-signature': h['webhook-signature'] ?? '' }) as ReceivedWebhook['payload'];
      } catch {
        payload = undefined;
      }
      const seen = { id: h['webhook-id'] ?? '', timestamp: h['webhook-timestamp'] ?? '', signature: h['webhook-signature'] ?? '', body, payload };
      const status = payload === undefined ? 400 : typeof how === 'number' ? how : how(seen);
      received.push({ ...seen, status });
      res.writeHead(status, { 'Content-Type': 'text/plain' });
      res.end(status < 300 ? 'ok' : 'no');
    });
  });
  let port = 0;
  let listening = false;
  const start = async () => {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    port = (server.address() as AddressInfo).port;
    listening = true;
  };
  const close = async () => {
    if (!listening) return;
    listening = false;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await start();
  t.after(close);
  return {
    url: `http://127.0.0.1:${port}/hooks/estate`,
    secret,
    received,
    accepted: () => received.filter((r) => r.status < 300),
    answer: (next) => (how = next),
    close,
    start,
  };
}
