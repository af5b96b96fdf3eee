import assert from 'node:assert/strict';
import { test } from 'node:test';
import { durationSpec, parseDuration } from '../src/core/duration.ts';
import { EstateError } from '../src/errors.ts';

test('parseDuration reads a whole number and one unit', async (t) => {
  const cases: [string, number][] = [
    ['30s', 30_000],
    ['100ms', 100],
    ['1s', 1_000],
    ['15m', 900_000],
    ['1h', 3_600_000],
    ['36h', 129_600_000],
    ['7d', 604_800_000],
    [' 2d ', 172_800_000],
  ];
  for (const [text, ms] of cases) {
    await t.test(JSON.stringify(text), () => assert.equal(parseDuration(text, '--ttl'), ms));
  }
});

test('parseDuration refuses anything else with a usage error naming the option', async (t) => {
  const cases = ['', '0s', '1', 'h', '1.5h', '-1h', '1H', '1w', '1h30m', '01h', '10 m', 'abc', '99999999d', '1e3s'];
  for (const text of cases) {
    await t.test(JSON.stringify(text), () => {
      assert.throws(
        () => parseDuration(text, '--expires'),
        (err: unknown) => err instanceof EstateError && err.code === 'usage' && err.exitCode === 2 && err.message.includes('--expires'),
      );
    });
  }
});

test('parseDuration enforces a maximum', () => {
  assert.equal(parseDuration('30d', '--ttl', 30 * 86_400_000), 30 * 86_400_000);
  assert.throws(() => parseDuration('31d', '--ttl', 30 * 86_400_000), /at most 30d/);
  assert.throws(() => parseDuration('721h', '--ttl', 30 * 86_400_000), /at most 30d/);
});

test('durationSpec uses the largest whole unit', async (t) => {
  const cases: [number, string][] = [
    [86_400_000, '1d'],
    [3_600_000, '1h'],
    [90_000, '90s'],
    [120_000, '2m'],
    [1_500, '1500ms'],
  ];
  for (const [ms, text] of cases) await t.test(text, () => assert.equal(durationSpec(ms), text));
});
