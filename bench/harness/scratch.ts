/** The run's scratch folder (SQLite files, callgrind counts, the `--against` worktree). */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The run's scratch folder, made when this module is first imported and removed when the run ends. */
export const scratch = mkdtempSync(join(tmpdir(), 'sms-outbox-bench-'));
