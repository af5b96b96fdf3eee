// Loaded into a CLI child with NODE_OPTIONS=--import=<this file>: every
// write through a FileHandle fails with ENOSPC, as on a full disk. The simulation for
// machines that cannot mount a tiny file system (see test/disk-full.test.ts).
import { open } from 'node:fs/promises';

const probe = await open(process.execPath, 'r');
const proto = Object.getPrototypeOf(probe);
await probe.close();
const full = async () => {
  throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28, syscall: 'write' });
};
Object.assign(proto, { write: full, writev: full, writeFile: full, appendFile: full });
