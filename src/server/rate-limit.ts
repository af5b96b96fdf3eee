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
 * `requests_per_minute`; a request takes one, and its answer one more per
 * `bytes_per_token` bytes past the first (chargeAnswer). Memory is bounded: at most
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
    const bucket = this.#touch(key, now);
    const tokens = bucket.tokens;
    const allowed = tokens >= 1;
    if (allowed) bucket.tokens = tokens - 1;
    return allowed ? undefined : Math.max(1, Math.ceil((1 - tokens) / this.#perMs / 1000));
  }

  /**
   * Takes `tokens` more of `key`'s bucket whatever it holds (the weight of an
   * answer already sent): the bucket may fall below empty, down to `-burst`,
   * and its next requests wait until it has refilled past one token.
   */
  owe(key: string, tokens: number): void {
    if (tokens <= 0) return;
    const bucket = this.#touch(key, this.#now());
    bucket.tokens = Math.max(-this.#config.burst, bucket.tokens - tokens);
  }

  /**
   * Charges one request of `req` to its client's bucket (`key`, from
   * clientKey). Throws `rate_limited` (429, with `Retry-After`) when that
   * bucket is empty. Returns the key charged, undefined when the request is
   * not limited: loopback clients when so configured, and everyone when the
   * limit is off.
   */
  charge(req: IncomingMessage, key: string): string | undefined {
    if (!this.#config.enabled) return undefined;
    if (this.#config.exempt_loopback && isLoopback(req.socket?.remoteAddress ?? '')) return undefined;
    const wait = this.take(key);
    if (wait === undefined) return key;
    throw new EstateError('rate_limited', `too many requests: try again in ${wait} s`, { headers: { 'Retry-After': String(wait) } });
  }

  /**
   * Charges the weight of an answer of `bytes` to `key` (as returned by
   * `charge`): one token per `bytes_per_token` bytes or part of them, the
   * first of which the request paid for when it was charged. So a 1 MiB
   * answer costs 16 requests' worth with the default 64 KiB: one client's
   * big reads slow that client, not the others.
   */
  chargeAnswer(key: string | undefined, bytes: number): void {
    if (key === undefined) return;
    this.owe(key, Math.ceil(bytes / this.#config.bytes_per_token) - 1);
  }

  /** `key`'s bucket, refilled to now and moved to the end (the Map keeps buckets in least-recently-used order). */
  #touch(key: string, now: number): Bucket {
    const kept = this.#buckets.get(key);
    const bucket = kept ?? { tokens: this.#config.burst, at: now };
    if (kept) {
      bucket.tokens = this.#level(kept, now);
      this.#buckets.delete(key);
    }
    bucket.at = now;
    // Room is made before this bucket is put back, so that it is not the one to go.
    if (this.#buckets.size >= this.#maxBuckets) this.#evict(now);
    this.#buckets.set(key, bucket);
    return bucket;
  }

  #level(bucket: Bucket, now: number): number {
    return Math.min(this.#config.burst, bucket.tokens + Math.max(0, now - bucket.at) * this.#perMs);
  }

  #evict(now: number): void {
    for (const [key, bucket] of this.#buckets) {
      if (this.#level(bucket, now) >= this.#config.burst) this.#buckets.delete(key);
    }
    // Still full of active clients: drop the least recently used tenth.
    if (this.#buckets.size >= this.#maxBuckets) {
      let drop = this.#buckets.size - Math.floor(this.#maxBuckets * 0.9);
      for (const key of this.#buckets.keys()) {
        if (drop-- <= 0) break;
        this.#buckets.delete(key);
      }
    }
  }
}

/**
 * Who a request comes from, for every per-client bound (rate limit, shares
 * of the expensive routes and of unsent bytes, streams): its credential (key
 * id and user) when it carries a valid one, else its client address (see
 * addressKey).
 */
export function clientKey(req: IncomingMessage, principal: Principal | undefined): string {
  return principal ? `credential:${principal.keyId}:${principal.userId}` : `address:${addressKey(req.socket?.remoteAddress ?? '')}`;
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
