/**
 * The demo's API key: SMS_API_KEY when set; otherwise the key kept beside the database, made
 * at the first start. Kept, because the messages outlive a restart and the key that reads
 * them must too: a key the reader exported keeps working.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';

/** Where the key came from, which the banner says. */
export type KeySource = 'environment' | 'generated' | 'kept';

/** The file that keeps the generated key of the database at `dbPath`. */
export function keyFileOf(dbPath: string): string {
  return `${dbPath}.key`;
}

/**
 * The key to use: `given` when not empty; else the one in `keyFile`; else a new one, written
 * there readable by this user only (`wx`: two demos starting at once on one database keep
 * the first one's key, and the second reads it).
 */
export function demoKey(given: string | undefined, keyFile: string): { key: string; source: KeySource } {
  if (given !== undefined && given !== '') return { key: given, source: 'environment' };
  const kept = readKept(keyFile);
  if (kept !== null) return { key: kept, source: 'kept' };
  const key = randomBytes(18).toString('base64url');
  try {
    writeFileSync(keyFile, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const again = (error as NodeJS.ErrnoException).code === 'EEXIST' ? readKept(keyFile) : null;
    if (again === null) throw error;
    return { key: again, source: 'kept' };
  }
  return { key, source: 'generated' };
}

function readKept(keyFile: string): string | null {
  try {
    const text = readFileSync(keyFile, 'utf8').trim();
    return text === '' ? null : text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}
