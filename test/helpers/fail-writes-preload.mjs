// Loaded into a CLI child with NODE_OPTIONS=--import=<this file> and
// ESTATE_TEST_FAIL_WRITES=<errno code> (EROFS, EACCES…): every write through a
// FileHandle fails with that code, as on a read-only mount. The in-process
// counterpart is failWrites in fail-writes.ts.
import { open } from 'node:fs/promises';

const code = process.env.ESTATE_TEST_FAIL_WRITES;
if (code) {
  const probe = await open(process.execPath, 'r');
  const proto = Object.getPrototypeOf(probe);
  await probe.close();
  const fail = async () => {
    throw Object.assign(new Error(`${code}: refused, write`), { code, syscall: 'write' });
  };
  Object.assign(proto, { write: fail, writev: fail, writeFile: fail, appendFile: fail });
}
