import { mkdir, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import type { TestContext } from 'node:test';
import { tempDataDir } from './data-dir.ts';

// Data dirs whose `/work/feed?limit=1000` answers 1 MiB, and clients that
// ask for it without reading, for the tests of big answers.

/** A data dir whose completions log holds `count` completions with every field at its longest, and `serve` settings in its config. */
export async function bigFeedDir(t: Pick<TestContext, 'after'>, serve: object, count = 400): Promise<string> {
  const dir = await tempDataDir(t);
  const lines = Array.from({ length: count }, (_, i) =>
    JSON.stringify({
      id: `wc_${i.toString(16).padStart(16, '0')}`,
      task_id: `T-${i}-${'t'.repeat(100)}`,
      board: 'ops',
      assignee: 'a'.repeat(100),
      title: 'T'.repeat(300),
      output_url: `https://example.org/${'u'.repeat(2000)}`,
      summary: 's'.repeat(2000),
      completed_at: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
    }),
  );
  await mkdir(path.join(dir, 'work'), { recursive: true });
  await writeFile(path.join(dir, 'work', 'completions.jsonl'), `${lines.join('\n')}\n`);
  await writeFile(path.join(dir, 'estate.config.json'), JSON.stringify({ serve }));
  return dir;
}

/**
 * A connection that asks for `target`, `times` over (pipelined), and never
 * reads a byte of the answers; from `localAddress` (127.0.0.1 by default:
 * another loopback address is another client, with its own shares).
 */
export function nonReader(t: Pick<TestContext, 'after'>, url: string, target: string, times: number, localAddress = '127.0.0.1'): Promise<net.Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ port: Number(port), host: '127.0.0.1', localAddress });
    t.after(() => socket.destroy());
    socket.pause();
    socket.on('error', () => {});
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.write(`GET ${target} HTTP/1.1\r\nHost: x\r\n\r\n`.repeat(times));
      resolve(socket);
    });
  });
}
