import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import { createToken } from '../src/core/keys/tokens.ts';
import { tempDataDir } from './helpers/data-dir.ts';
import { keySecret, newKey, startServer } from './helpers/server.ts';
import { waitUntil } from './helpers/wait-until.ts';

// A credential written percent-encoded in the URL (`est%5F…`, `%65st…`,
// encoded twice `%255F`, a token's dots as `%2E`) is the same secret to
// anyone who decodes it: every log line (access, auth_failed, error) redacts
// it like one in clear, and malformed escapes around it break nothing.

/** Every character of `text` percent-encoded. */
function encodeAll(text: string): string {
  return [...text].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

test('a key or a token percent-encoded in the URL is redacted from every log line', async (t) => {
  const dir = await tempDataDir(t);
  const lines: Record<string, unknown>[] = [];
  const server = await startServer(t, dir, { log: (line) => lines.push(line) });
  const key = await newKey(dir, 'alice');
  const { token } = await createToken(dir, { userId: 'alice', ttlMs: 60_000 });
  const keyId = /^est_([0-9a-f]{12})_/.exec(key)?.[1] as string;
  const secret = keySecret(key);
  const tokenParts = token.split('.');
  const forms = [
    key.replaceAll('_', '%5F'), // est%5F<id>%5F<secret>
    key.replace('e', '%65').replace('_', '%255f'), // %65st%255f<id>_<secret>: encoded twice
    encodeAll(key), // every character
  ];
  const invalid = { 'X-API-Key': 'est_0123456789ab_notavalidsecretnotavalidsecret12' };

  // auth_failed (and access) lines: an invalid credential on paths holding the key, a bad escape beside it.
  for (const form of forms) assert.equal((await server.get(`/training/runs/${form}%ZZ%`, invalid)).status, 403);
  assert.equal((await server.get(`/state/${tokenParts.join('%2E')}`, { 'X-API-Key': 'wrong' })).status, 403);
  // A query value of any name, on a public route (access line only).
  assert.equal((await server.get(`/healthz?next=${forms[0]}`)).status, 200);
  // error lines: a broken credential store makes a 503 logged as an error with the request's path.
  await writeFile(path.join(dir, 'keys.json'), 'not json', { mode: 0o600 });
  assert.equal((await server.get(`/training/runs/${forms[0]}`, { 'X-API-Key': key })).status, 503);

  await waitUntil('the auth_failed, error and access lines', () =>
    lines.filter((l) => l.event === 'auth_failed').length >= 4 && lines.some((l) => l.level === 'error') && lines.filter((l) => l.event === 'request').length >= 6,
  );
  const text = lines.map((l) => JSON.stringify(l)).join('\n');
  for (const part of [secret, encodeAll(secret), tokenParts[1] as string, tokenParts[2] as string]) {
    assert.ok(!text.includes(part), `a secret is in the log:\n${text}`);
  }
  const authFailed = lines.filter((l) => l.event === 'auth_failed').map((l) => l.path);
  assert.deepEqual(authFailed, [...forms.map(() => `/training/runs/est_${keyId}_REDACTED%ZZ%`), '/state/REDACTED']);
  const error = lines.find((l) => l.level === 'error') as Record<string, unknown>;
  assert.equal(error.path, `/training/runs/est_${keyId}_REDACTED`);
  const access = lines.filter((l) => l.event === 'request').map((l) => l.path);
  assert.ok(access.includes(`/healthz?next=est_${keyId}_REDACTED`), access.join('\n'));
});
