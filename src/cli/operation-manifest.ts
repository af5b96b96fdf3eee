import type { Operation } from '../api/define-operation.ts';
import { operations } from '../api/operations/index.ts';
import { commandManifest, type ManifestCommand } from './command-manifest.ts';

// The operation commands (command-manifest.ts) and the loader of the one
// operation a command line runs. Run from source, both come from the
// operations table. The bundle replaces this module (scripts/build.mjs) with
// the same manifest, worked out at build time, and loaders that import only
// the module of the operation asked for: a command builds no other
// operation's schemas, and `estate --help` builds none.

export const OPERATION_COMMANDS: readonly ManifestCommand[] = commandManifest(operations);

/** The operation with this id. */
export async function loadOperation(id: string): Promise<Operation> {
  const op = operations.find((o) => o.id === id);
  if (!op) throw new Error(`no operation ${id}`);
  return op;
}
