import { type EnvSettings, envSettings, maxAnswerBytes } from '../config.ts';
import { EstateError } from '../errors.ts';
import { contextApiKey, type ContextsFile, contextsFilePath, readContextsFile } from './contexts-file.ts';
import type { RemoteTarget } from './remote-call.ts';

/** The command-line options that decide where a command runs. */
export interface TargetFlags {
  url?: string | undefined;
  apiKey?: string | undefined;
  context?: string | undefined;
  dataDir?: string | undefined;
  config?: string | undefined;
}

type Server = { kind: 'local' } | { kind: 'url'; url: string; from: string } | { kind: 'context'; name: string; from: string };

/**
 * Where a command runs: a remote server (the answer) or the local data dir
 * (undefined). Each setting is taken from the first level that has it:
 * flags, then the environment, then the contexts file.
 *
 * | level       | remote                          | local                     |
 * |-------------|---------------------------------|---------------------------|
 * | flags       | `--url URL` or `--context NAME` | `--data-dir`, `--config`  |
 * | environment | `ESTATE_URL` or `ESTATE_CONTEXT`| `ESTATE_DATA_DIR`         |
 * | file        | its `current` context           |                           |
 *
 * Two choices on one level (`--url` with `--data-dir` or `--context`;
 * `ESTATE_URL` with `ESTATE_CONTEXT` or `ESTATE_DATA_DIR`) are a usage error,
 * never a silent pick. The API key is `--api-key`, else `ESTATE_API_KEY`,
 * else the chosen context's credential; a context's credential is never
 * sent to a URL given by `--url` or `ESTATE_URL`. Both the address and the
 * key are checked before any request (usage error, exit 2), and no message
 * quotes the key.
 */
export function resolveTarget(flags: TargetFlags, envVars: NodeJS.ProcessEnv): RemoteTarget | undefined {
  const env = envSettings(envVars);
  const file = contextsFilePath(envVars);
  let loaded: ContextsFile | undefined;
  const contexts = () => (loaded ??= readContextsFile(file));
  const server = pickServer(flags, env, () => contexts().current);
  if (server.kind === 'local') return undefined;
  let url: string;
  let from: string;
  let contextName: string | undefined;
  let contextKey: (() => string | undefined) | undefined;
  if (server.kind === 'url') {
    url = server.url;
    from = server.from;
  } else {
    const { name } = server;
    contextName = name;
    const entry = contexts().contexts[name];
    if (!entry) throw new EstateError('usage', `no context named "${name.slice(0, 80)}" (from ${server.from}) in ${file}; see estate context list`);
    url = entry.url;
    from = `the url of context ${name}`;
    contextKey = () => contextApiKey(name, entry, file, envVars);
  }
  checkServerUrl(url, from);
  let apiKey: string | undefined;
  let credentialFrom: string | undefined;
  if (flags.apiKey !== undefined) [apiKey, credentialFrom] = [flags.apiKey, '--api-key'];
  else if (env.apiKey !== undefined) [apiKey, credentialFrom] = [env.apiKey, 'ESTATE_API_KEY'];
  else if (contextKey) {
    apiKey = contextKey();
    credentialFrom = apiKey === undefined ? undefined : `context ${contextName}`;
  }
  if (apiKey !== undefined) checkApiKey(apiKey, credentialFrom ?? 'the credential');
  return { url, apiKey, maxBytes: maxAnswerBytes(envVars), ...(credentialFrom ? { credentialFrom } : {}) };
}

function pickServer(flags: TargetFlags, env: EnvSettings, current: () => string | undefined): Server {
  if (flags.url !== undefined && flags.context !== undefined) throw new EstateError('usage', '--url and --context both name a server: pass one');
  const remoteFlag = flags.url !== undefined ? '--url' : flags.context !== undefined ? '--context' : undefined;
  const localFlag = flags.dataDir !== undefined ? '--data-dir' : flags.config !== undefined ? '--config' : undefined;
  if (remoteFlag && localFlag) throw new EstateError('usage', `${remoteFlag} asks a server and ${localFlag} the local data dir: pass one or the other`);
  if (flags.url !== undefined) return { kind: 'url', url: flags.url, from: '--url' };
  if (flags.context !== undefined) return { kind: 'context', name: flags.context, from: '--context' };
  if (localFlag) return { kind: 'local' };
  if (env.url !== undefined && env.context !== undefined) {
    throw new EstateError('usage', 'ESTATE_URL and ESTATE_CONTEXT are both set: unset one, or pass --url, --context or --data-dir');
  }
  const remoteEnv = env.url !== undefined ? 'ESTATE_URL' : env.context !== undefined ? 'ESTATE_CONTEXT' : undefined;
  if (remoteEnv && env.dataDir !== undefined) {
    throw new EstateError('usage', `${remoteEnv} and ESTATE_DATA_DIR are both set: unset one, or pass --url, --context or --data-dir`);
  }
  if (env.url !== undefined) return { kind: 'url', url: env.url, from: 'ESTATE_URL' };
  if (env.context !== undefined) return { kind: 'context', name: env.context, from: 'ESTATE_CONTEXT' };
  if (env.dataDir !== undefined) return { kind: 'local' };
  const name = current();
  return name === undefined ? { kind: 'local' } : { kind: 'context', name, from: 'the current context' };
}

/** An estate server's address: http or https, no user or password, no query or fragment. `from` names where it came from. */
export function checkServerUrl(text: string, from: string): void {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) {
    throw new EstateError('usage', `${from} is not a server address: give an http(s) URL such as http://hub:8080`);
  }
  if (url.username || url.password) {
    throw new EstateError('usage', `${from} must not hold a user or password: give the API key with --api-key, ESTATE_API_KEY or a context`);
  }
  if (url.search || url.hash) throw new EstateError('usage', `${from} must be the server's address alone, without ?query or #fragment`);
}

/** Visible ASCII only: what an HTTP header can carry as it is. */
const HEADER_VALUE = /^[\x21-\x7e]+$/;

/** Refuses, before any request, an API key that cannot be sent as a header; the message never quotes it. */
export function checkApiKey(key: string, from: string): void {
  if (!HEADER_VALUE.test(key)) {
    throw new EstateError(
      'usage',
      `the API key from ${from} cannot be sent: it holds spaces, control characters or non-ASCII characters; give the key exactly as estate keys create printed it`,
    );
  }
}
