/**
 * 32-bit string hashes for the in-memory log index: FNV-1a over the UTF-16
 * code units, finished with murmur3's fmix32 so that every output bit (the
 * low ones a power-of-two table uses, especially) depends on every input bit.
 * Not cryptographic: a match names a candidate to verify, never a proof.
 */
export function hashString(value: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x01000193);
  return fmix32(h);
}

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
