import { pulseStatusOp } from '../api/operations/pulse.ts';
import { apiRoot, healthz, readyz } from '../api/operations/system.ts';
import type { DoctorCheck } from '../core/doctor.ts';
import { EstateError } from '../errors.ts';
import { remoteCall, type RemoteTarget } from './remote-call.ts';

/**
 * `estate doctor --url`: checks a running estate server, in order: that it
 * answers (`/healthz`), that it is ready (`/readyz`), its version against
 * this CLI's (`/`), and that the API key is valid for reading (a protected
 * GET, `/health/pulse/status`). When the server does not answer, the other
 * checks are `skip`. Never throws; never shows the API key.
 */
export async function checkRemote(target: RemoteTarget, cliVersion: string): Promise<DoctorCheck[]> {
  const started = performance.now();
  const reached = await attempt(() => remoteCall(healthz, target, {}));
  if (reached instanceof EstateError) {
    return [
      { name: 'server', status: 'fail', detail: reached.message, fix: 'check the address, and that `estate serve` runs there and is reachable from this machine' },
      ...['ready', 'version', 'credential'].map((name): DoctorCheck => ({ name, status: 'skip', detail: 'not checked: the server does not answer', fix: null })),
    ];
  }
  const checks: DoctorCheck[] = [{ name: 'server', status: 'ok', detail: `${target.url} answered in ${Math.round(performance.now() - started)} ms`, fix: null }];

  const ready = await attempt(() => remoteCall(readyz, target, {}));
  checks.push(
    ready instanceof EstateError
      ? { name: 'ready', status: 'fail', detail: ready.message, fix: 'run `estate doctor` on the server\'s machine: it names what is wrong with its data dir' }
      : { name: 'ready', status: 'ok', detail: 'the data dir is readable and writable and the credential store parses', fix: null },
  );

  const root = await attempt(() => remoteCall(apiRoot, target, {}));
  const version = root instanceof EstateError ? undefined : (root.body as { version?: unknown } | undefined)?.version;
  if (typeof version !== 'string') {
    const why = root instanceof EstateError ? root.message : 'its answer to / names no version';
    checks.push({ name: 'version', status: 'warn', detail: `unknown: ${why}`, fix: 'check that --url points at an estate server' });
  } else if (version !== cliVersion) {
    checks.push({ name: 'version', status: 'warn', detail: `the server runs estate ${version}, this CLI is ${cliVersion}`, fix: 'upgrade the older of the two, so both speak the same API' });
  } else {
    checks.push({ name: 'version', status: 'ok', detail: `estate ${version}, the same as this CLI`, fix: null });
  }

  if (!target.apiKey) {
    checks.push({ name: 'credential', status: 'warn', detail: 'no API key given: only public routes will answer', fix: 'pass --api-key or set ESTATE_API_KEY' });
    return checks;
  }
  const read = await attempt(() => remoteCall(pulseStatusOp, target, {}));
  if (!(read instanceof EstateError)) {
    checks.push({ name: 'credential', status: 'ok', detail: 'the API key is valid and may read', fix: null });
  } else if (read.code === 'forbidden') {
    checks.push({ name: 'credential', status: 'fail', detail: read.message, fix: 'pass a key this server knows (estate keys create --user NAME on the server makes one)' });
  } else {
    checks.push({ name: 'credential', status: 'warn', detail: `not verified: ${read.message}`, fix: null });
  }
  return checks;
}

async function attempt<T>(call: () => Promise<T>): Promise<T | EstateError> {
  try {
    return await call();
  } catch (err) {
    return err instanceof EstateError ? err : new EstateError('io', String((err as Error)?.message ?? err));
  }
}
