import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';

// Fake upstream servers for the external sources: real HTTP on 127.0.0.1,
// port 0, closed (with every open socket) after the test.

type After = Pick<TestContext, 'after'>;

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
}

export interface FakeServer {
  url: string;
  /** Every request received, in order. */
  requests: SeenRequest[];
}

/** A server answering with `handle`, recording every request. */
export async function startFake(t: After, handle: (req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => void): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const seen = { method: req.method ?? 'GET', path: url.pathname, query: url.searchParams, authorization: req.headers.authorization };
    requests.push(seen);
    handle(req, res, seen);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Answers every request with `status` and `body`, after `delayMs`. */
export function startAnswering(t: After, status: number, body: unknown = {}, delayMs = 0): Promise<FakeServer> {
  return startFake(t, (_req, res) => {
    const timer = setTimeout(() => sendJson(res, status, body), delayMs);
    res.on('close', () => clearTimeout(timer));
  });
}

/** Accepts every connection and request, and never answers. */
export function startHanging(t: After): Promise<FakeServer> {
  return startFake(t, () => {});
}

/** A URL on 127.0.0.1 where nothing listens: a port that was opened and closed again. */
export async function refusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

// ---------------------------------------------------------------- a fake Forgejo

export interface FakeIssue {
  number: number;
  title: string;
  state: 'open' | 'closed';
  /** Set on pull requests, as Forgejo does. */
  pull_request: { merged: boolean } | null;
}

export interface FakeForgeOptions {
  /** How many repositories `org/repo-001`… it holds. */
  repos?: number;
  /** Issues (and pull requests) by `owner/repo`; other repositories are 404. */
  issues?: Record<string, FakeIssue[]>;
  /** When set, requests must carry `Authorization: token <token>`, else 401. */
  token?: string;
  /** Which pagination headers it sends (Forgejo sends both). */
  headers?: 'both' | 'link' | 'total' | 'none';
  /** Behave like an old forge that ignores `type=issues` (pull requests come back too). */
  ignoreType?: boolean;
  /** Answer every request this late (or as late as the function says for each). */
  delayMs?: number | ((seen: SeenRequest) => number);
}

/** Forgejo's MAX_RESPONSE_ITEMS default: larger `limit`s are cut to this. */
export const FAKE_MAX_LIMIT = 50;

export function fakeRepos(n: number, base: string) {
  return Array.from({ length: n }, (_, i) => {
    const name = `repo-${String(i + 1).padStart(3, '0')}`;
    return {
      id: i + 1,
      owner: { id: 1, login: 'org' },
      name,
      full_name: `org/${name}`,
      description: i % 7 === 0 ? '' : `Repository number ${i + 1}`,
      html_url: `${base}/org/${name}`,
      stars_count: i,
      forks_count: i % 3,
      open_issues_count: i % 5,
      open_pr_counter: i % 2,
      language: i % 2 ? 'Go' : 'TypeScript',
      archived: i % 10 === 0,
      private: false,
      fork: false,
      default_branch: 'main',
      updated_at: new Date(Date.UTC(2026, 10, 1, 0, i)).toISOString(),
    };
  });
}

/** Issues #1..#n, newest (highest number) first; every 4th is a pull request, every 3rd is closed. */
export function fakeIssues(n: number): FakeIssue[] {
  return Array.from({ length: n }, (_, i) => {
    const number = n - i;
    const pr = number % 4 === 0;
    return { number, title: `${pr ? 'PR' : 'Issue'} ${number}`, state: number % 3 === 0 ? 'closed' : 'open', pull_request: pr ? { merged: false } : null };
  });
}

/** A fake Forgejo: `/api/v1/repos/search` and `/api/v1/repos/{owner}/{repo}/issues`, paginated like the real one. */
export async function startFakeForge(t: After, options: FakeForgeOptions = {}): Promise<FakeServer> {
  let repos: ReturnType<typeof fakeRepos> = [];
  const fake = await startFake(t, (req, res, seen) => {
    const delayMs = typeof options.delayMs === 'function' ? options.delayMs(seen) : options.delayMs;
    if (delayMs) {
      const timer = setTimeout(() => answer(req, res, seen), delayMs);
      res.on('close', () => clearTimeout(timer));
    } else answer(req, res, seen);
  });
  const answer = (_req: IncomingMessage, res: ServerResponse, seen: SeenRequest) => {
    if (options.token !== undefined && seen.authorization !== `token ${options.token}`) {
      return sendJson(res, 401, { message: seen.authorization ? 'user does not exist [uid: 0, name: ]' : 'token is required', url: `${fake.url}/api/swagger` });
    }
    const page = Math.max(1, Number(seen.query.get('page') ?? 1));
    const limit = Math.min(FAKE_MAX_LIMIT, Math.max(1, Number(seen.query.get('limit') ?? 30)));
    const paged = <T>(all: T[], body: (items: T[]) => unknown) => {
      const items = all.slice((page - 1) * limit, page * limit);
      sendJson(res, 200, body(items), pageHeaders(fake.url + seen.path, page, limit, all.length, options.headers ?? 'both'));
    };
    if (seen.path === '/api/v1/repos/search') return paged(repos, (data) => ({ ok: true, data }));
    const m = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/issues$/.exec(seen.path);
    const list = m ? options.issues?.[`${decodeURIComponent(m[1] as string)}/${decodeURIComponent(m[2] as string)}`] : undefined;
    if (!list) return sendJson(res, 404, { errors: null, message: 'The target couldn\'t be found.', url: `${fake.url}/api/swagger` });
    const state = seen.query.get('state') ?? 'open';
    const type = options.ignoreType ? null : seen.query.get('type');
    const matching = list.filter(
      (i) => (state === 'all' || i.state === state) && (type === 'issues' ? !i.pull_request : type === 'pulls' ? Boolean(i.pull_request) : true),
    );
    return paged(matching, (items) => items.map((i) => ({ id: 1000 + i.number, ...i, user: { login: 'alice' }, labels: [{ name: 'bug' }], comments: 2, html_url: `${fake.url}/x/${i.number}` })));
  };
  repos = fakeRepos(options.repos ?? 0, fake.url);
  return fake;
}

function pageHeaders(base: string, page: number, limit: number, total: number, which: FakeForgeOptions['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  const last = Math.max(1, Math.ceil(total / limit));
  if (which === 'both' || which === 'total') headers['X-Total-Count'] = String(total);
  if (which === 'both' || which === 'link') {
    const link = (p: number, rel: string) => `<${base}?limit=${limit}&page=${p}>; rel="${rel}"`;
    const links = page < last ? [link(page + 1, 'next'), link(last, 'last')] : [link(1, 'first'), link(Math.max(1, page - 1), 'prev')];
    headers.Link = links.join(',');
  }
  return headers;
}
