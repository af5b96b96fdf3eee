import type { z } from 'zod';
import { isSharedRecord } from '../core/jsonl/shared-records.ts';
import type { EstateContext, Principal } from './context.ts';
import { isReply, type Operation } from './define-operation.ts';
import { outputCheck } from './output-check.ts';
import { outputError, parseInput, type RawInput } from './parse-input.ts';

export interface OperationResult {
  status: number;
  body: unknown;
}

/** Shared answers and the output schema each passed. */
const passed = new WeakMap<object, z.ZodType>();

/**
 * parse input → run the handler → check the output. Shared by the HTTP
 * pipeline and the CLI's local mode, so both answer the same for the same
 * input. Access control is the caller's (the server checks credentials; a
 * local CLI user already holds the data dir).
 */
export async function runOperation(
  op: Operation,
  ctx: EstateContext,
  raw: RawInput,
  principal: Principal | undefined,
): Promise<OperationResult> {
  const input = parseInput(op, raw);
  const answer = await op.handler({ ctx, input, principal });
  const { status, body } = isReply(answer) ? answer : { status: op.status, body: answer };
  // A shared answer (frozen: a page read again) that passed this check passes it again.
  const shared = isSharedRecord(body);
  if (shared && passed.get(body as object) === op.output) return { status, body };
  // Most answers pass the compiled check and go out as they are; zod decides the rest (and names the issues of a bad one).
  if (outputCheck(op.output)?.(body)) {
    if (shared) passed.set(body as object, op.output);
    return { status, body };
  }
  const checked = op.output.safeParse(body);
  if (!checked.success) throw outputError(op, checked.error.issues);
  return { status, body: checked.data };
}
