// One node of `GET /nodes` (list-nodes.ts), in a file of its own that imports
// nothing, so the dashboard's browser code reads the same type.

export interface NodeSummary {
  name: string;
  /** The later of its heartbeat's `last_seen` and its newest trend point's `ts`; null when neither says. */
  last_seen: string | null;
  /** No sample for `stale_after_s` (or never one). */
  stale: boolean;
  /** The latest pulse's status, else the heartbeat's; null when neither says. */
  status: string | null;
  cpu_pct: number | null;
  mem_used_pct: number | null;
  load1: number | null;
  /** The highest `used_bytes / (used_bytes + free_bytes) × 100` (as `df` shows) among the file systems of its newest snapshots. */
  disk_used_pct: number | null;
}
