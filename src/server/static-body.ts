import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';

// Files estate serves as they are (the docs viewers' assets and pages, the
// dashboard's script and stylesheet): made once, sent with their ETag (304
// when the client has it) and gzip when accepted.

/** Assets never change under one URL: each page asks for `?v=<content hash>`. */
export const ASSET_CACHE = 'public, max-age=31536000, immutable';
/** Pages and the document may change with an upgrade: revalidate with the ETag. */
export const PAGE_CACHE = 'no-cache';

export interface Body {
  type: string;
  raw: Buffer;
  gzip: Buffer | undefined;
  /** Brotli, where the build made it (the dashboard's assets). */
  br?: Buffer | undefined;
  etag: string;
}

/** A body of `type`, gzipped here when worth it (and not `precompressed`: the caller brings its own forms). */
export function body(type: string, content: string | Buffer, precompressed = false): Body {
  const raw = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const compressible = !precompressed && !type.startsWith('image/') && raw.length > 1024;
  const etag = `"${createHash('sha256').update(raw).digest('base64url').slice(0, 22)}"`;
  return { type, raw, gzip: compressible ? gzipSync(raw, { level: 9 }) : undefined, etag };
}

/** Sends `b` with its ETag (304 when the client has it) and gzip when accepted. */
export function sendBody(req: IncomingMessage, res: ServerResponse, b: Body, cacheControl: string, headers: Record<string, string> = {}): void {
  const common = { ETag: b.etag, 'Cache-Control': cacheControl, Vary: 'Accept-Encoding', ...headers };
  const tags = (req.headers['if-none-match'] ?? '').split(',').map((t) => t.trim().replace(/^W\//, ''));
  if (tags.includes(b.etag) || tags.includes('*')) {
    res.writeHead(304, common);
    res.end();
    return;
  }
  const accepted = String(req.headers['accept-encoding'] ?? '');
  const encoding = b.br && /\bbr\b/.test(accepted) ? 'br' : b.gzip && /\bgzip\b/.test(accepted) ? 'gzip' : undefined;
  const payload = encoding === 'br' ? (b.br as Buffer) : encoding === 'gzip' ? (b.gzip as Buffer) : b.raw;
  res.writeHead(200, {
    ...common,
    'Content-Type': b.type,
    'Content-Length': String(payload.length),
    ...(encoding ? { 'Content-Encoding': encoding } : {}),
  });
  res.end(req.method === 'HEAD' ? undefined : payload);
}

/** A value computed on first use, then kept for the life of the process. */
export function once<T>(make: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: make() }).v;
}

export const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
};

