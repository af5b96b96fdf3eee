import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { tempDataDir } from './helpers/data-dir.ts';
import { createKeyWithCli, replicaPostgres, startReplicas, type Replica } from './helpers/replicas.ts';
import { openStream } from './helpers/sse.ts';
import { waitUntil } from './helpers/wait-until.ts';

// PostgreSQL stopped and started again under load, with three `estate serve`
// replicas on it (issue 14): no acknowledged write is lost or doubled, the
// requests of the outage are 503 with Retry-After (never a 500, never a
// hang, never a replica that dies), and the replicas recover with no restart.

const LOOPS = 36;
/** Requests at most, all loops together: the test is bounded in work as well as in time. */
const MAX_REQUESTS = 4000;

type Phase = 'up' | 'halting' | 'down' | 'resuming' | 'recovered';
/** What a loop writes: completions and entries (keyed: a retry is a replay), training runs (each its own transaction). */
type Kind = 'work' | 'entry' | 'run';

interface Answer {
  kind: Kind;
  /** The task id, slug or run name sent. */
  name: string;
  status: number;
  retryAfter: string | null;
  detail: string | undefined;
  /** The id the acknowledgement names (id, entry_id, run_id). */
  id: string | undefined;
  /** The phase when the request was sent, and when its answer came. */
  sent: Phase;
  answered: Phase;
  replica: number;
}

const WRITES: Record<Kind, { path: string; body: (name: string) => object; id: string }> = {
  work: { path: '/work/complete', body: (name) => ({ task_id: name, board: 'load', assignee: 'writer', title: `Task ${name}` }), id: 'id' },
  entry: { path: '/publishing/register', body: (name) => ({ title: `Piece ${name}`, slug: name, content_type: 'note', target_site: 'load' }), id: 'entry_id' },
  run: { path: '/training/start', body: (name) => ({ name }), id: 'run_id' },
};

test('PostgreSQL halted and resumed under load: acknowledged writes are kept once, the outage is 503 with Retry-After, replicas recover without a restart', { timeout: 120_000 }, async (t) => {
  const pg = await replicaPostgres(t, { dedicated: true });
  if (!pg) return;
  const replicas = await startReplicas(t, pg, 3);
  const cliDir = await tempDataDir(t);
  // Training runs of two users, so the runs stay within the per-user quota (1000).
  const keys = [(await createKeyWithCli(pg, cliDir, 'alice')).key, (await createKeyWithCli(pg, cliDir, 'bob')).key];
  // A live feed open across the outage: what is written after it must still reach it.
  const stream = await openStream(t, `${(replicas[1] as Replica).url}/work/stream`);
  assert.equal(stream.status, 200);

  let phase: Phase = 'up';
  let stop = false;
  let requests = 0;
  const answers: Answer[] = [];
  const failures: string[] = [];
  const answered = () => {
    assert.deepEqual(failures, [], 'every request is answered (no replica died, none hung)');
    return true;
  };
  const send = async (kind: Kind, r: number, name: string, key: string): Promise<Answer | undefined> => {
    const sent = phase;
    requests++;
    try {
      const res = await (replicas[r] as Replica).request('POST', WRITES[kind].path, { key, body: WRITES[kind].body(name), timeoutMs: 30_000 });
      const answer = { kind, name, status: res.status, retryAfter: res.headers.get('retry-after'), detail: res.json?.detail, id: res.json?.[WRITES[kind].id], sent, answered: phase, replica: r };
      answers.push(answer);
      return answer;
    } catch (err) {
      failures.push(`${kind} ${name} on replica ${r} (sent ${sent}): ${(err as Error).message}`);
      return undefined;
    }
  };
  const loops = Array.from({ length: LOOPS }, async (_, loop) => {
    const kind = (['work', 'entry', 'run'] as const)[loop % 3] as Kind;
    for (let n = 0; !stop && requests < MAX_REQUESTS; n++) {
      const answer = await send(kind, (loop + n) % replicas.length, `l${loop}-${n}`, keys[loop % 2] as string);
      // Refused: the loop moves on to its next write after a pause (refused keyed writes are sent again at the end).
      if (answer?.status !== 201) await new Promise((r) => setTimeout(r, 50));
    }
  });
  const acknowledged = (when: Phase) => answers.filter((a) => a.sent === when && (a.status === 201 || a.status === 200));
  try {
    await waitUntil('writes are acknowledged', () => answered() && acknowledged('up').length >= 100);
    phase = 'halting';
    await pg.halt();
    phase = 'down';
    await waitUntil('every replica answers during the outage', () => answered() && replicas.every((_, r) => answers.filter((a) => a.sent === 'down' && a.answered === 'down' && a.replica === r).length >= 10));
    phase = 'resuming';
    await pg.resume();
    phase = 'recovered';
    await waitUntil('every replica acknowledges writes again', () => answered() && replicas.every((_, r) => acknowledged('recovered').filter((a) => a.replica === r).length >= 20));
  } finally {
    stop = true;
    await Promise.all(loops);
  }
  answered();

  // Answers: 201 or 503 (the names are new); every 503 says when to retry, and why the store is unavailable:
  // a store that refuses connections or has just come back is never waited on until the deadline ("did not answer").
  assert.deepEqual([...new Set(answers.map((a) => a.status))].filter((s) => s !== 201 && s !== 503), [], 'no other status');
  for (const a of answers.filter((x) => x.status === 503)) {
    assert.equal(a.retryAfter, '5', `${a.kind} ${a.name}: Retry-After`);
    assert.match(a.detail ?? '', /^the store postgres:\/\/postgres@127\.0\.0\.1:\d+\/\w+ is unavailable \(/, `${a.kind} ${a.name} sent ${a.sent}, answered ${a.answered}`);
  }
  const duringOutage = answers.filter((a) => a.sent === 'down' && a.answered === 'down');
  assert.ok(duringOutage.length >= 30);
  assert.deepEqual(duringOutage.filter((a) => a.status !== 503), [], 'every request sent and answered while PostgreSQL was down is 503');
  assert.deepEqual(duringOutage.filter((a) => !a.detail?.includes('is unavailable (connection refused)')), [], 'the outage is named as it is');

  // Every refused keyed write sent again (as a client honouring Retry-After would) is stored now, or was already.
  const refused = [...new Map(answers.filter((a) => a.status === 503 && a.kind !== 'run').map((a) => [`${a.kind} ${a.name}`, a])).values()];
  assert.ok(refused.length > 0);
  for (let i = 0; i < refused.length; i += 16) {
    const again = await Promise.all(refused.slice(i, i + 16).map((a, n) => send(a.kind, n % replicas.length, a.name, keys[0] as string)));
    for (const a of again) assert.ok(a?.status === 201 || a?.status === 200, `${a?.kind} ${a?.name} sent again: ${a?.status} ${a?.detail}`);
  }

  // Stored: every completion and entry sent, each once, with the record its acknowledgements named; every run acknowledged.
  const sql = postgres(pg.url, { max: 1, onnotice: () => {} });
  const [works, entries, runs] = await Promise.all([
    sql`SELECT task_id AS name, id FROM completions WHERE board = 'load'`,
    sql`SELECT slug AS name, id FROM entries WHERE target_site = 'load'`,
    sql`SELECT run->>'name' AS name, run_id AS id FROM training_runs`,
  ]).finally(() => sql.end());
  for (const [kind, rows] of [['work', works], ['entry', entries], ['run', runs]] as const) {
    const stored = new Map(rows.map((r) => [String(r.name), String(r.id)]));
    assert.equal(stored.size, rows.length, `${kind}: each stored once`);
    const mine = answers.filter((a) => a.kind === kind);
    for (const a of mine.filter((x) => x.status === 201 || x.status === 200)) assert.equal(stored.get(a.name), a.id, `${kind} ${a.name} acknowledged as ${a.id}`);
    if (kind !== 'run') assert.deepEqual([...stored.keys()].sort(), [...new Set(mine.map((a) => a.name))].sort(), `${kind}: every write sent is stored, and nothing else`);
  }

  // Recovered without a restart: ready, and the live feed carries what is written now.
  for (const r of replicas) assert.equal((await r.request('GET', '/readyz')).status, 200);
  const after = await send('work', 0, 'after-the-outage', keys[0] as string);
  assert.equal(after?.status, 201, after?.detail);
  await waitUntil('the stream opened before the outage carries a completion written after it', () => stream.events.some((e) => e.id === after?.id));
});
