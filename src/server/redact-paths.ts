/** What stands in for the data dir's absolute path in log lines and error details. */
export const DATA_DIR_MARK = '<data dir>';

/**
 * `text` with every occurrence of the data dir's absolute path replaced by
 * `<data dir>`: `open '/srv/estate/trends.jsonl'` → `open '<data dir>/trends.jsonl'`.
 * Where a file is inside the data dir is the operator's business, where the
 * data dir is on the host is nobody else's.
 */
export function redactPaths(text: string, dataDir: string): string {
  return dataDir.length > 1 && text.includes(dataDir) ? text.replaceAll(dataDir, DATA_DIR_MARK) : text;
}
