/** The longest node name (as `node_name` in the config allows). */
export const MAX_NODE_NAME = 200;

/** Characters a node name never holds: C0 and C1 controls, bidi overrides (it is printed in tables, logs and events; as text-fields.ts refuses them). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

/** Whether `name` can name a node: 1-200 characters, not only spaces, no control characters or bidi overrides. */
export function isNodeName(name: string): boolean {
  return name.length >= 1 && name.length <= MAX_NODE_NAME && name.trim() !== '' && !CONTROL.test(name);
}

/** What a node name must be, for error messages. */
export const NODE_NAME_RULE = `1-${MAX_NODE_NAME} characters, not only spaces, no control characters or bidi overrides`;
