/** The fields of /proc/meminfo in bytes (its `kB` are KiB). */
export function parseMeminfo(text: string): Map<string, number> {
  const fields = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([\w()]+):\s+(\d+)(\s+kB)?\s*$/.exec(line);
    if (m) fields.set(m[1] as string, Number(m[2]) * (m[3] ? 1024 : 1));
  }
  return fields;
}

/** Total and used (total minus available) memory, and used swap, from /proc/meminfo; a field absent stays undefined. */
export function hostMemory(fields: Map<string, number>): { total?: number; used?: number; swapUsed?: number } {
  const total = fields.get('MemTotal');
  const available = fields.get('MemAvailable');
  const swapTotal = fields.get('SwapTotal');
  const swapFree = fields.get('SwapFree');
  return {
    total,
    used: total !== undefined && available !== undefined ? total - available : undefined,
    swapUsed: swapTotal !== undefined && swapFree !== undefined ? swapTotal - swapFree : undefined,
  };
}
