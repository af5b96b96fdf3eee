/**
 * `word` as a POSIX shell reads it back: as it is when it holds only
 * characters the shell leaves alone, else in single quotes. For the commands
 * estate suggests (`estate init '/srv/my estate'`).
 */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
