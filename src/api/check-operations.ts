import { pathParamNames, type Operation } from './define-operation.ts';

/**
 * Checks the operations table at load: ids, method+path pairs and CLI
 * commands are unique, and every `{param}` of a path is in the path schema
 * (and the reverse). Throws on the first problem, naming it.
 */
export function checkOperations(ops: readonly Operation[]): readonly Operation[] {
  const ids = new Set<string>();
  const routes = new Set<string>();
  const commands = new Map<string, Operation>();
  for (const op of ops) {
    if (ids.has(op.id)) throw new Error(`operations table: duplicate id ${op.id}`);
    ids.add(op.id);
    const route = `${op.method} ${op.path.replace(/\{[^}]+\}/g, '{}')}`;
    if (routes.has(route)) throw new Error(`operations table: duplicate route ${op.method} ${op.path} (${op.id})`);
    routes.add(route);
    const params = pathParamNames(op.path);
    const declared = Object.keys(op.input.path?.shape ?? {});
    for (const p of params) {
      if (!declared.includes(p)) throw new Error(`operations table: ${op.id}: path parameter {${p}} is missing from its input schema`);
    }
    for (const d of declared) {
      if (!params.includes(d)) throw new Error(`operations table: ${op.id}: input path field ${d} is not in ${op.path}`);
    }
    if (op.cli) {
      const args = op.cli.args ?? [];
      // `owner/repo` is one argument that fills two path parameters.
      for (const a of args) {
        for (const part of a.split('/')) {
          if (params.includes(part)) continue;
          throw new Error(`operations table: ${op.id}: CLI argument ${a}${part === a ? '' : ` names ${part}, which`} is not a path parameter`);
        }
      }
      // Two operations may share a command when they differ by argument count (`state` / `state NAME`).
      const key = `${op.cli.command}#${args.length}`;
      const other = commands.get(key);
      if (other) throw new Error(`operations table: CLI command "${op.cli.command}" is used by both ${other.id} and ${op.id}`);
      commands.set(key, op);
    }
  }
  return ops;
}
