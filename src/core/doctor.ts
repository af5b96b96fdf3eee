import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';
import { CONFIG_FILE, defaultConfig, envSettings, initHint, loadConfig, resolveSecrets, resolveStoreSpec, type EstateConfig } from '../config.ts';
import { EstateError } from '../errors.ts';
import { forgeGet } from './forge/forge-request.ts';
import { forgeSettings } from './forge/forge-settings.ts';
import { checkProvider } from './providers.ts';
import { readWebhookSecret } from './notify/webhook-secret.ts';
import { statsProgram } from './stats.ts';
import { dataPath } from './data-files.ts';
import { keysCreateHint, liveKeyCount } from './first-key.ts';
import { isPostgresSpec, openStore } from './store/open-store.ts';

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** How to fix it; null when there is nothing to do. */
  fix: string | null;
}

export interface DoctorOptions {
  dataDir: string;
  /** `--config FILE`, if given. */
  configFile?: string | undefined;
  /** Where the secrets the config names (and ESTATE_STORE, PGPASSWORD, PGPASSFILE) are read from. */
  env: NodeJS.ProcessEnv;
  /** `--store`, if given (else $ESTATE_STORE, else the config's `store`). */
  store?: string | undefined;
}

/**
 * Checks what estate depends on, in order: the data dir, the config, the
 * store (PostgreSQL: connection, schema version, privileges), whether it
 * holds an API key (a warning when none can open a route), the forge
 * (token and reachability), each provider, each notify target's secret and the statistics command
 * (that it can be run; it is not run). Never throws: every problem is a
 * `fail` (or `warn`) check with a fix. When the data dir fails its check and
 * no config file is given, the config is `skip` and only a store named by
 * `--store` or ESTATE_STORE is checked.
 */
export async function runDoctor(options: DoctorOptions): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [await checkDataDir(options.dataDir, options.env)];
  const configFile = options.configFile ? path.resolve(options.configFile) : path.join(options.dataDir, CONFIG_FILE);
  // With no data dir there is no config to read in it: say nothing of it rather than call the defaults valid.
  if (!options.configFile && !(await isDirectory(options.dataDir))) {
    checks.push({ name: 'config', status: 'skip', detail: `not checked: there is no data dir to read ${CONFIG_FILE} from`, fix: null });
    // A store named by --store or ESTATE_STORE is checked all the same: a database host may have no data dir (docs/store.md).
    const spec = resolveStoreSpec(options.store, defaultConfig(), options.env);
    if (spec !== undefined) checks.push(...(await checkStore(spec, options.env)));
    return checks;
  }
  let config: EstateConfig;
  try {
    config = loadConfig(options.dataDir, options.configFile, options.env);
    const detail = options.configFile || (await exists(configFile)) ? `${configFile}: ${describeConfig(config)}` : `no config file (defaults): ${configFile} is read when there is one`;
    checks.push({ name: 'config', status: 'ok', detail, fix: null });
  } catch (err) {
    checks.push({ name: 'config', status: 'fail', detail: (err as Error).message, fix: `edit ${configFile}: each problem is named by its path in the file` });
    return checks;
  }
  const spec = resolveStoreSpec(options.store, config, options.env);
  const store = await checkStore(spec, options.env);
  checks.push(...store);
  // A store that cannot be reached has no keys to count: its check says why.
  if (!store.some((c) => c.status === 'fail')) checks.push(await checkKeys(spec, config, options));
  checks.push(...(await checkForge(config, options.env, configFile)));
  const providers = await Promise.all(config.providers.map((p) => checkProvider(p, () => new Date())));
  providers.forEach((p, i) => {
    checks.push(
      p.reachable
        ? { name: `provider ${p.name}`, status: 'ok', detail: `${p.url} answered ${p.status} in ${p.latency_ms} ms`, fix: null }
        : {
            name: `provider ${p.name}`,
            status: 'fail',
            detail: `${p.url}: ${p.error}`,
            fix: `check that the provider runs and that providers[${i}].url (and expect_status, timeout_ms) in ${configFile} are right`,
          },
    );
  });
  checks.push(...checkNotify(config, options.env, configFile));
  checks.push(await checkStats(config, options.dataDir, options.env, configFile));
  return checks;
}

/** Each notify target's secret (docs/notify.md): set and a whsec_ secret. Nothing is sent (estate notify test sends a test event). */
function checkNotify(config: EstateConfig, env: NodeJS.ProcessEnv, configFile: string): DoctorCheck[] {
  const secrets = resolveSecrets(config, env).notify;
  return config.notify.map((target, i) => {
    try {
      readWebhookSecret(target.secret_env, secrets[target.name]);
      return { name: `notify ${target.name}`, status: 'ok', detail: `its secret is in $${target.secret_env}; estate notify test ${target.name} sends a test event`, fix: null };
    } catch (err) {
      return {
        name: `notify ${target.name}`,
        status: 'fail',
        detail: (err as Error).message,
        fix: `export ${target.secret_env}="whsec_$(openssl rand -base64 32)" and give the receiver the same secret (or fix notify[${i}].secret_env in ${configFile})`,
      };
    }
  });
}

async function checkStore(spec: string | undefined, env: NodeJS.ProcessEnv): Promise<DoctorCheck[]> {
  if (spec === undefined || spec === 'data-dir') return [{ name: 'store', status: 'ok', detail: 'the data dir (what estate writes is kept in its files)', fix: null }];
  if (!isPostgresSpec(spec)) return [{ name: 'store', status: 'fail', detail: 'the store setting is neither a postgres:// URL nor data-dir', fix: 'set --store (or $ESTATE_STORE, or store in the config) to a postgres:// URL, or data-dir' }];
  // Loaded only here, with its driver: a data-dir estate never needs it.
  const { checkPostgresStore } = await import('./store/postgres/check-postgres.ts');
  return checkPostgresStore(spec, env);
}

/**
 * Whether the store holds a key that can open a route: without one every
 * protected route answers 403 (a warning, with the command that makes one),
 * unless ESTATE_API_KEY is set for the server to accept.
 */
async function checkKeys(spec: string | undefined, config: EstateConfig, options: DoctorOptions): Promise<DoctorCheck> {
  const name = 'API keys';
  const store = openStore(spec, { dataDir: options.dataDir, config, env: options.env });
  try {
    const live = await liveKeyCount(store.credentials, new Date());
    if (live > 0) return { name, status: 'ok', detail: `${live} key${live === 1 ? '' : 's'} neither revoked nor expired`, fix: null };
    if (envSettings(options.env).apiKey) return { name, status: 'ok', detail: 'none in the store; $ESTATE_API_KEY is set (a server started with it accepts it, as user operator)', fix: null };
    return { name, status: 'warn', detail: 'no API key: every protected route answers 403', fix: `create one with: ${keysCreateHint(options.dataDir, options.env, options.store)}` };
  } catch (err) {
    const fix =
      store.kind === 'data-dir'
        ? `restore ${dataPath(options.dataDir, 'keys')} from a backup, or move it aside and create new keys with: ${keysCreateHint(options.dataDir, options.env)}`
        : 'check that the database holds estate\'s schema (estate migrate) and that this user may read it';
    return { name, status: 'fail', detail: (err as Error).message, fix };
  } finally {
    await store.close();
  }
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => undefined)) !== undefined;
}

async function isDirectory(dir: string): Promise<boolean> {
  return (await stat(dir).catch(() => undefined))?.isDirectory() === true;
}

async function checkDataDir(dir: string, env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const name = 'data dir';
  try {
    if (!(await stat(dir)).isDirectory()) return { name, status: 'fail', detail: `${dir} is not a directory`, fix: `point --data-dir (or $ESTATE_DATA_DIR) at a directory, or run: estate init DIR` };
    await access(dir, constants.R_OK | constants.W_OK | constants.X_OK);
    return { name, status: 'ok', detail: `${dir} (readable and writable)`, fix: null };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { name, status: 'fail', detail: `${dir} does not exist`, fix: initHint(dir, env) };
    return { name, status: 'fail', detail: `${dir} is not readable and writable (${code ?? (err as Error).message})`, fix: `give the user running estate read and write access to ${dir}` };
  }
}

async function checkForge(config: EstateConfig, env: NodeJS.ProcessEnv, configFile: string): Promise<DoctorCheck[]> {
  if (!config.forge) return [{ name: 'forge', status: 'skip', detail: 'not configured (optional)', fix: null }];
  const forge = forgeSettings(config, resolveSecrets(config, env));
  const checks: DoctorCheck[] = [];
  if (!forge.token) {
    checks.push({
      name: 'forge token',
      status: 'warn',
      detail: `$${forge.tokenEnv} is not set: only public repositories are visible`,
      fix: `export ${forge.tokenEnv}=<a forge access token with read access to repositories and issues>`,
    });
  }
  const started = performance.now();
  try {
    await forgeGet(forge, '/repos/search', { limit: 1 });
    checks.push({ name: 'forge', status: 'ok', detail: `${forge.url} answered in ${Math.round(performance.now() - started)} ms`, fix: null });
  } catch (err) {
    const error = err instanceof EstateError ? err : new EstateError('bad_gateway', String(err));
    const fix =
      error.code === 'gateway_timeout'
        ? `check that the forge runs; if it is only slow, raise forge.timeout_ms (now ${forge.timeoutMs}) in ${configFile}`
        : `check forge.url in ${configFile} and that the forge runs and is reachable from this machine`;
    checks.push({ name: 'forge', status: 'fail', detail: error.message, fix });
  }
  return checks;
}

async function checkStats(config: EstateConfig, dataDir: string, env: NodeJS.ProcessEnv, configFile: string): Promise<DoctorCheck> {
  const name = 'stats';
  if (!config.stats) return { name, status: 'skip', detail: 'not configured (optional)', fix: null };
  const program = statsProgram(config.stats.command, dataDir);
  const found = await findExecutable(program, env.PATH ?? '');
  if (found) return { name, status: 'ok', detail: `${found} is executable (not run)`, fix: null };
  return {
    name,
    status: 'fail',
    detail: `${program} is not an executable file${program.includes('/') ? '' : ' on $PATH'}`,
    fix: `set stats.command[0] in ${configFile} to an executable (a relative path resolves against ${dataDir}), or chmod +x it`,
  };
}

/** The executable `program` names: a path as it is, a bare name looked up in `searchPath`. */
async function findExecutable(program: string, searchPath: string): Promise<string | undefined> {
  const candidates = program.includes('/') ? [program] : searchPath.split(path.delimiter).filter(Boolean).map((d) => path.join(d, program));
  for (const file of candidates) {
    try {
      if ((await stat(file)).isFile()) {
        await access(file, constants.X_OK);
        return file;
      }
    } catch {
      // not this one
    }
  }
  return undefined;
}

function describeConfig(config: EstateConfig): string {
  const parts = [
    config.forge ? 'forge' : undefined,
    config.providers.length ? `${config.providers.length} provider${config.providers.length === 1 ? '' : 's'}` : undefined,
    config.stats ? 'stats' : undefined,
    config.notify.length ? `${config.notify.length} notify target${config.notify.length === 1 ? '' : 's'}` : undefined,
  ].filter(Boolean);
  return parts.length ? `valid (${parts.join(', ')})` : 'valid (no external sources)';
}
