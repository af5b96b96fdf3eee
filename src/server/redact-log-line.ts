import { redactCredentialShapes } from './credential-shapes.ts';
import { redactPaths } from './redact-paths.ts';

/**
 * A log line as it may be written: every string in it, however deep (keys
 * included), has the data dir's absolute path replaced by `<data dir>` and
 * anything shaped like an API key or an access token redacted. Every line
 * the server logs (access, error, auth_failed, client_error, warnings)
 * passes through here, so no call site can forget it.
 */
export function redactLogLine(line: Record<string, unknown>, dataDir: string): Record<string, unknown> {
  return redactValue(line, dataDir) as Record<string, unknown>;
}

function redactString(text: string, dataDir: string): string {
  return redactCredentialShapes(redactPaths(text, dataDir));
}

function redactValue(value: unknown, dataDir: string): unknown {
  if (typeof value === 'string') return redactString(value, dataDir);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, dataDir));
  // A loop, not Object.fromEntries(Object.entries(…).map(…)): every request logs a line.
  const out: Record<string, unknown> = {};
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const name = redactString(key, dataDir);
    const redacted = redactValue((value as Record<string, unknown>)[key], dataDir);
    if (name === '__proto__') Object.defineProperty(out, name, { value: redacted, enumerable: true, writable: true, configurable: true });
    else out[name] = redacted;
  }
  return out;
}
