import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rfc3339Ms } from '../src/core/rollups/range-time.ts';

// The date check reads the digits itself (Date.parse rolls a 30 February over into March).
test('rfc3339Ms takes a real calendar date and no other: leap years by the Gregorian rule, months of 28-31 days', () => {
  assert.equal(rfc3339Ms('2026-11-21T13:05:00Z'), Date.UTC(2026, 10, 21, 13, 5));
  assert.equal(rfc3339Ms('2024-02-29T00:00:00Z'), Date.UTC(2024, 1, 29));
  assert.equal(rfc3339Ms('2000-02-29T00:00:00+02:00'), Date.UTC(2000, 1, 28, 22));
  assert.equal(rfc3339Ms('0001-01-01T00:00:00Z'), Date.parse('0001-01-01T00:00:00Z'));
  for (const bad of ['2026-02-29T00:00:00Z', '1900-02-29T00:00:00Z', '2026-04-31T00:00:00Z', '2026-13-01T00:00:00Z', '2026-00-10T00:00:00Z', '2026-01-00T00:00:00Z', '2026-01-32T00:00:00Z', '0000-01-01T00:00:00Z', '0000-02-29T00:00:00Z']) {
    assert.ok(Number.isNaN(rfc3339Ms(bad)), bad);
  }
  for (const bad of ['2026-11-21', '2026-11-21 13:05:00Z', 'yesterday', 7, undefined]) assert.ok(Number.isNaN(rfc3339Ms(bad)), String(bad));
  // Every day of every month of a leap and a common year reads as Date.UTC says.
  for (const y of [2023, 2024]) {
    for (let m = 1; m <= 12; m++) {
      const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
      for (let d = 1; d <= 31; d++) {
        const text = `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}T06:00:00Z`;
        if (d <= days) assert.equal(rfc3339Ms(text), Date.UTC(y, m - 1, d, 6), text);
        else assert.ok(Number.isNaN(rfc3339Ms(text)), text);
      }
    }
  }
});
