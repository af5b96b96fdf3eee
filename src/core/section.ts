import { EstateError } from '../errors.ts';

/** One source of an aggregate answer: its value, or why it is missing. */
export type Settled<T> = { value: T; error: null } | { value: null; error: string };

/**
 * Runs one source of an aggregate (`/summary`, `/api/garden`…) so that its
 * failure becomes that section's `error` instead of failing the answer.
 * `what` names the source in messages about file-system failures.
 */
export async function settle<T>(what: string, load: () => Promise<T> | T): Promise<Settled<T>> {
  try {
    return { value: await load(), error: null };
  } catch (err) {
    return { value: null, error: messageOf(err, what) };
  }
}

/**
 * A failure as one sentence fit for an answer: an EstateError's message, a
 * file-system error's code (never its path), and nothing of an internal error.
 */
export function messageOf(err: unknown, what = 'source'): string {
  if (err instanceof EstateError) return err.code === 'internal' ? `${what}: internal error` : err.message;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return `cannot read ${what}: ${code}`;
  return `${what}: internal error`;
}
