import type { IncomingMessage } from 'node:http';
import type { Principal } from '../api/context.ts';
import type { RateLimitConfig } from '../config.ts';
import { EstateError } from '../errors.ts';

export interface RateLimiterOptions {
  /** Most buckets kept; beyond it idle (full) buckets go first, then the least recently used. */
  maxBuckets?: number;
  now?: () => number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Token buckets by key: each holds up to `burst` tokens and refills at
 * `requests_per_minute`; a request takes one. Memory is bounded: at most
 * `maxBuckets` buckets are kept, and a bucket that has refilled is the same
 * as a new one, so it is the first to go.
 */
export class RateLimiter {
  readonly #config: RateLimitConfig;
  readonly #perMs: number;
  readonly #maxBuckets: number;
  readonly #now: () => number;
  /** In least-recently-used order: a bucket is moved to the end whenever it is used. */
  readonly #buckets = new Map<string, Bucket>();

  constructor(config: RateLimitConfig, options: RateLimiterOptions = {}) {
    this.#config = config;
    this.#perMs = config.requests_per_minute / 60_000;
    this.#maxBuckets = options.maxBuckets ?? 10_000;
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#buckets.size;
  }

  /** Takes a token of `key`'s bucket: undefined when there was one, else the seconds until there is. */
  take(key: string): number | undefined {
    const now = this.#now();
    const kept = this.#buckets.get(key);
    const tokens = kept ? this.#level(kept, now) : this.#config.burst;
    const allowed = tokens >= 1;
    const bucket = kept ?? { tokens, at: now };
    bucket.tokens = allowed ? tokens - 1 : tokens;
    bucket.at = now;
    // Moved to the end: the Map keeps buckets in least-recently-used order.
    if (kept) this.#buckets.delete(key);
    this.#buckets.set(key, bucket);
    if (this.#buckets.size > this.#maxBuckets) this.#evict(now);
    return allowed ? undefined : Math.max(1, Math.ceil((1 - tokens) / this.#perMs / 1000));
  }

  /**
   * Charges one request: to its credential (key id and user) when it carries
   * a valid one, else to its client address. Throws `rate_limited` (429, with
   * `Retry-After`) when that bucket is empty. Loopback clients are exempt
   * when so configured, and everyone when the limit is off.
   */
  charge(req: IncomingMessage, principal: Principal | undefined): void {
    if (!this.#config.enabled) return;
    const address = req.socket?.remoteAddress ?? '';
    if (this.#config.exempt_loopback && isLoopback(address)) return;
    const key = principal ? `credential:${principal.keyId}:${principal.userId}` : `address:${addressKey(address)}`;
    const wait = this.take(key);
    if (wait === undefined) return;
    throw new EstateError('rate_limited', `too many requests: try again in ${wait} s`, { headers: { 'Retry-After': String(wait) } });
  }

  #level(bucket: Bucket, now: number): number {
    return Math.min(this.#config.burst, bucket.tokens + Math.max(0, now - bucket.at) * this.#perMs);
  }

  #evict(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (this.#level(bucket, now) >= this.#config.burst) this.#buckets.delete(key);
    }
    // Still full of active clients: drop the least recently used tenth.
    if (this.#buckets.size > this.#maxBuckets) {
      let drop = this.#buckets.size - Math.floor(this.#maxBuckets * 0.9);
      for (const key of this.#buckets.keys()) {
        if (drop-- <= 0) break;
        this.#buckets.delete(key);
      }
    }
  }
}

/** 127.0.0.0/8 and ::1, also as IPv4-mapped IPv6 addresses. */
export function isLoopback(address: string): boolean {
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4) || address === '::1';
}

/**
 * The bucket of a client address: an IPv4 address alone; an IPv6 address by
 * its /64 prefix, the block one subscriber usually holds (else each of its
 * 2^64 addresses would get a bucket of its own).
 */
export function addressKey(address: string): string {
  if (address.startsWith('::ffff:') && address.includes('.')) return address.slice(7);
  if (!address.includes(':')) return address;
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':')}::/64`;
}
