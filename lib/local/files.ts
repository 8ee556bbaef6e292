import { closeSync, fsyncSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Replace `file` with `data` so that a reader (or a restart after `kill -9` or a power cut) finds
 * either the old content or the new one, never a truncated mix: write a temporary file beside it,
 * flush it to disk, rename it over the target, then flush the directory entry.
 *
 * Hand-written rather than `write-file-atomic`: that package does not flush the directory (the
 * rename itself can be lost in a power cut), and this is the whole of what is needed.
 */
export function writeFileAtomic(file: string, data: string): void {
  const temp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  const fd = openSync(temp, 'w', 0o600);
  try {
    writeFileSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temp, file);
  fsyncDirectory(dirname(file));
}

/** Make a rename or a file creation in `dir` durable; a no-op where directories cannot be opened. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Windows cannot open a directory; its renames are durable once the call returns.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
