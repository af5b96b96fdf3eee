// Loaded into a CLI child with NODE_OPTIONS=--import=<this file> and
// ESTATE_TEST_FAIL_OPEN=<errno code>:<path suffix> (EIO:trends.jsonl): every
// open (node:fs/promises) of a path ending with the suffix fails with that
// code and the kernel's message, path included. The in-process counterpart
// is failOpens in fail-opens.ts.
import { createRequire, syncBuiltinESMExports } from 'node:module';

const [code, suffix] = (process.env.ESTATE_TEST_FAIL_OPEN ?? '').split(':');
if (code && suffix) {
  const fsPromises = createRequire(import.meta.url)('node:fs/promises');
  const original = fsPromises.open;
  fsPromises.open = (file, ...rest) => {
    if (!String(file).endsWith(suffix)) return original(file, ...rest);
    return Promise.reject(Object.assign(new Error(`${code}: i/o error, open '${file}'`), { code, syscall: 'open', path: String(file) }));
  };
  syncBuiltinESMExports();
}
