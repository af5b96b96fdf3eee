import { randomBytes } from 'node:crypto';
import { renameSync } from 'node:fs';
import { open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { assertInsideDataDir } from './open-data-file.ts';

/**
 * Replaces `file` with `content` so that readers see the old or the new file,
 * never a partial one: write a temp file beside it, fsync, rename over. A
 * link in `file`'s place is replaced, never written through; a folder that
 * leads out of the data dir is refused (`assertInsideDataDir`).
 * `beforeReplace` is a writer's last look (at its lock, at the file it
 * read), after the slow part of the write: it runs once the temp file is
 * durable, and the rename follows it synchronously, so nothing else in this
 * process comes between them. When it throws or answers false, nothing is
 * replaced. Resolves true when `file` was replaced.
 *
 * `durable: false` skips the fsync of the temp file: readers still see the
 * old or the new file whole, but a crash soon after may leave the old file,
 * or (on a file system that orders neither) an empty one. Only for a file
 * whose loss its reader takes as "start over", never as a value.
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o600, beforeReplace?: () => boolean, { durable = true }: { durable?: boolean } = {}): Promise<boolean> {
  await assertInsideDataDir(file);
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx', mode);
  try {
    await handle.writeFile(content, 'utf8');
    await handle.chmod(mode);
    if (durable) await handle.sync();
  } catch (err) {
    await handle.close();
    await unlink(temp).catch(() => {});
    throw err;
  }
  await handle.close();
  try {
    if (beforeReplace) {
      if (!beforeReplace()) {
        await unlink(temp).catch(() => {});
        return false;
      }
      renameSync(temp, file);
    } else {
      await rename(temp, file);
    }
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
  return true;
}
