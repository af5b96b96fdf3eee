// The yardstick: a bare node:http server doing the least that estate's two
// benchmarked routes must do. /healthz answers a fixed body; /trends?limit=N
// reads the newest N lines of DATA_DIR/trends.jsonl backwards from the end.
import { createServer } from 'node:http';
import { open } from 'node:fs/promises';

const file = `${process.argv[2]}/trends.jsonl`;
async function tail(limit) {
  const fh = await open(file, 'r');
  try {
    let pos = (await fh.stat()).size, rest = '', lines = [];
    while (pos > 0 && lines.length <= limit) {
      const len = Math.min(65536, pos); pos -= len;
      const buf = Buffer.alloc(len); await fh.read(buf, 0, len, pos);
      const parts = (buf.toString('latin1') + rest).split('\n'); rest = parts.shift();
      lines = parts.filter(Boolean).concat(lines);
    }
    if (pos === 0 && rest) lines.unshift(rest);
    return lines.slice(-limit).reverse().map((l) => JSON.parse(Buffer.from(l, 'latin1').toString('utf8')));
  } finally { await fh.close(); }
}
createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  if (url.pathname === '/healthz') return res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"status":"ok"}');
  const items = await tail(Number(url.searchParams.get('limit') ?? 100));
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ items, count: items.length }));
}).listen(0, '127.0.0.1', function () { console.log(`bare server at http://127.0.0.1:${this.address().port}`); });
