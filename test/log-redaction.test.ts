import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { createToken } from '../src/core/keys/tokens.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { keySecret, newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// Every log line the server writes (access, auth_failed, error,
// warnings) passes through one redaction: a credential in the URL path,
// wherever it stands, never reaches the log in clear, nor the data dir's path.

test('a key or a token in the URL path is redacted from every log line: access, auth_failed and error alike', async (t) => {
  const dir = await tempDataDir(t);
  const lines: Record<string, unknown>[] = [];
  const server = await startServer(t, dir, { log: (line) => lines.push(line) });
  const key = await newKey(dir, 'alice');
  const { token } = await createToken(dir, { userId: 'alice', ttlMs: 60_000 });
  const keyId = /^est_([0-9a-f]{12})_/.exec(key)?.[1];
  const secrets = [key, keySecret(key), token];

  // auth_failed: an invalid credential on a route whose path holds the key and the token.
  const refused = await server.get(`/training/runs/${key}`, { 'X-API-Key': 'est_0123456789ab_notavalidsecretnotavalidsecret12' });
  assert.equal(refused.status, 403);
  assert.equal((await server.get(`/state/${token}`, { 'X-API-Key': 'wrong' })).status, 403);
  // error: a broken credential store makes a 503, logged as an error line with its path.
  await writeFile(path.join(dir, 'keys.json'), 'not json', { mode: 0o600 });
  const broken = await server.get(`/training/runs/${key}`, { 'X-API-Key': key });
  assert.equal(broken.status, 503);

  await waitUntil('the auth_failed, error and access lines', () =>
    lines.filter((l) => l.event === 'auth_failed').length >= 2 && lines.some((l) => l.level === 'error') && lines.filter((l) => l.event === 'request').length >= 3,
  );
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  for (const secret of secrets) assert.ok(!text.includes(secret), `a secret is in the log:\n${text}`);
  assert.ok(!text.includes(dir), 'no data dir path');
  const authFailed = lines.filter((l) => l.event === 'auth_failed');
  assert.deepEqual(authFailed.map((l) => l.path), [`/training/runs/est_${keyId}_REDACTED`, '/state/REDACTED']);
  const error = lines.find((l) => l.level === 'error') as Record<string, unknown>;
  assert.equal(error.path, `/training/runs/est_${keyId}_REDACTED`);
  assert.match(String(error.error), /^the credential store is corrupt/);
  assert.match(String(error.cause), /<data dir>\/keys\.json is not a key store/, 'the log names the file, its folder redacted');
});
