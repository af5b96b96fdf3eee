import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { createContext } from '../../api/context.ts';
import { assertDataDir, envSettings, loadConfig, resolveDataDir, serveSettings } from '../../config.ts';
import { EstateError } from '../../errors.ts';
import { projectRoot } from '../../project-root.ts';
import { addDataDirOptions } from '../common-options.ts';
import type { CliIO } from '../io.ts';

interface ServeOptions {
  dataDir?: string;
  config?: string;
  host?: string;
  port?: string;
  demo?: boolean;
}

export function serveCommand(io: CliIO): Command {
  const cmd = new Command('serve')
    .description('Serve the HTTP API over a data dir until SIGTERM or SIGINT')
    .option('--host <host>', 'address to listen on (default: config serve.host, else 127.0.0.1)')
    .option('--port <port>', 'port to listen on; 0 picks a free one (default: config serve.port, else 8080)')
    .option('--demo', 'serve a temporary copy of the demo estate and print a demo key');
  addDataDirOptions(cmd);
  cmd.addHelpText('after', '\nExamples:\n  $ estate serve --data-dir /var/lib/estate --port 8080\n  $ estate serve --demo --port 0\n');
  cmd.action(async (options: ServeOptions) => {
    // The server's modules load only for this command, so other commands start fast.
    const [{ copyDemoEstate }, { createKey }, { createApp }, { listen, listenLimits }] = await Promise.all([
      import('../../core/demo-estate.ts'),
      import('../../core/keys/key-store.ts'),
      import('../../server/create-app.ts'),
      import('../../server/listen.ts'),
    ]);
    let tempDir: string | undefined;
    let dataDir: string;
    if (options.demo) {
      tempDir = await mkdtemp(path.join(os.tmpdir(), 'estate-demo-'));
      dataDir = path.join(tempDir, 'data');
      await copyDemoEstate(path.join(projectRoot(), 'fixtures', 'demo-estate'), dataDir, new Date());
    } else {
      dataDir = resolveDataDir(options.dataDir, io.env);
      assertDataDir(dataDir);
    }
    const config = loadConfig(dataDir, options.config);
    const host = options.host ?? config.serve?.host ?? '127.0.0.1';
    const port = parsePort(options.port ?? config.serve?.port ?? 8080);
    const ctx = createContext(dataDir, config);
    // Access lines, warnings and errors: one JSON object a line on stderr,
    // gathered and written once per turn of the event loop (a write per
    // request cost more than the request itself under load).
    let pending: string[] = [];
    const flush = () => {
      const lines = pending;
      pending = [];
      if (lines.length) io.stderr(lines.join(''));
    };
    const log = (line: object) => {
      if (pending.push(`${JSON.stringify(line)}\n`) === 1) setImmediate(flush);
    };
    const app = createApp(ctx, { envApiKey: envSettings(io.env).apiKey, log });
    let running;
    try {
      running = await listen(app, { host, port, ...listenLimits(serveSettings(config)), onClientError: log });
    } catch (err) {
      throw new EstateError('io', `cannot listen on ${host}:${port}: ${(err as Error).message}`);
    }
    io.stdout(`estate ${options.demo ? 'demo ' : ''}serving ${dataDir} at ${running.url}\n`);
    if (options.demo) {
      const { key } = await createKey(dataDir, { userId: 'demo', name: 'demo key' });
      io.stdout(`demo key (user "demo"): ${key}\n  try: curl -H 'X-API-Key: ${key}' ${running.url}/trends?limit=5\n`);
    }
    const signal = await io.stopSignal;
    io.stderr(`estate: ${signal} received, draining requests\n`);
    await app.closeStreams();
    await running.close();
    await app.close();
    flush();
    if (tempDir) await rm(tempDir, { recursive: true, force: true });
  });
  return cmd;
}

function parsePort(value: string | number): number {
  const port = typeof value === 'number' ? value : /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new EstateError('usage', `invalid --port ${value}: use 0-65535`);
  return port;
}
