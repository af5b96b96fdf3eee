import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { startProgress } from '../src/cli/progress.ts';
import { waitUntil } from './helpers/wait-until.ts';

function fakeIO(stderrIsTTY: boolean | undefined) {
  const written: string[] = [];
  return { written, io: { stderr: (s: string) => void written.push(s), stderrIsTTY } };
}

test('the progress line is drawn on a terminal only, and erased when the answer arrives', async (t) => {
  const cases: [string, boolean | undefined, string | undefined, boolean][] = [
    ['terminal', true, 'checking providers…', true],
    ['pipe', false, 'checking providers…', false],
    ['unknown', undefined, 'checking providers…', false],
    ['no label', true, undefined, false],
  ];
  for (const [name, tty, label, drawn] of cases) {
    await t.test(name, async () => {
      const { io, written } = fakeIO(tty);
      const stop = startProgress(io, label, 5);
      // Drawn: wait for the spinner to turn (a busy machine may fire its timer late); not drawn: give it time to.
      if (drawn) await waitUntil('the spinner turns', () => written.length >= 2);
      else await sleep(30);
      stop();
      stop();
      if (!drawn) return assert.deepEqual(written, []);
      assert.ok(written.length >= 3, 'the spinner turns');
      assert.ok(written.slice(0, -1).every((w) => w.startsWith('\r\x1b[2K') && w.endsWith(' checking providers…')));
      assert.equal(new Set(written.slice(0, -1).map((w) => w.at(5))).size > 1, true, 'frames change');
      assert.equal(written.at(-1), '\r\x1b[2K', 'the last write erases the line');
      const count = written.length;
      await sleep(20);
      assert.equal(written.length, count, 'nothing is drawn after stop');
    });
  }
});
