/**
 * The README's quick start, run as a person would: the demo gateway (`npm start`) in a
 * child process and the README's own curl block, verbatim, in bash, with the `PORT` the
 * block sets once set to the demo's. Each answer must have the shape the README shows. If
 * this fails, the README is not true.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../helpers/poll.js';
import { startDemo, stopDemo, type RunningDemo } from '../helpers/demo.js';

const run = promisify(execFile);
const KEY = 'readme-test-key';

/**
 * The curl block of the quick start, split into its commands (comments, `export` and the
 * `PORT=` line dropped), and the `PORT=` line.
 */
function quickStart(): { commands: string[]; portLine: string | null } {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const block = /```sh\nexport SMS_API_KEY=[^\n]*\n([\s\S]*?)```/.exec(readme);
  if (block === null) throw new Error('README has no quick-start curl block starting with `export SMS_API_KEY=`');
  const commands: string[] = [];
  let portLine: string | null = null;
  let current = '';
  for (const line of block[1]!.split('\n')) {
    if (current === '' && line.startsWith('PORT=')) {
      portLine = line;
      continue;
    }
    if (current === '' && (line.startsWith('#') || line.trim() === '')) continue;
    current += `${line}\n`;
    if (!line.endsWith('\\')) {
      commands.push(current.trim());
      current = '';
    }
  }
  return { commands, portLine };
}

let dir: string;
let demo: RunningDemo;
let port: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sms-outbox-readme-'));
  demo = startDemo({ SMS_DB: join(dir, 'demo.db'), SMS_API_KEY: KEY });
  port = new URL(await demo.origin).port;
});

afterAll(async () => {
  if (demo) await stopDemo(demo.child);
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * Runs the commands in one bash (so REF carries over), with the demo's key and port as the
 * reader sets them; returns each command's output.
 */
async function runCommands(commands: readonly string[]): Promise<unknown[]> {
  const separator = '@@@END@@@';
  const script = commands.map((command) => `${command}\necho; echo '${separator}'`).join('\n');
  const { stdout } = await run('bash', ['-eo', 'pipefail', '-c', script], { env: { ...process.env, SMS_API_KEY: KEY, PORT: port }, timeout: 20_000 });
  return stdout
    .split(separator)
    .slice(0, commands.length)
    .map((out) => out.trim())
    .map((out) => (out === '' ? null : JSON.parse(out)));
}

describe('the README quick start', () => {
  it('sets the port once, in a variable, and uses it in every command', () => {
    const { commands, portLine } = quickStart();
    expect(portLine).toMatch(/^PORT=3000\s+#/);
    for (const command of commands) {
      expect(command).not.toMatch(/:3000\b/);
      expect(command).toContain('$PORT');
    }
  });

  it('answers every curl command as the README says', async () => {
    const { commands } = quickStart();
    expect(commands).toHaveLength(5);
    const [quick, premium, assign, byRef, byExternalId] = await runCommands(commands);
    const ref = expect.stringMatching(/^[0-9a-f-]{36}$/);
    expect(quick).toEqual([{ external_id: 'abc-1', recipient: '254712345678', sms_count: 1, message_ref: ref }]);
    expect(premium).toEqual([{ external_id: 'p-1', mobile_number: '254712345678', sms_count: 1, message_ref: ref }]);
    expect(assign).toBeNull();
    expect(byRef).toMatchObject({ message_ref: ref, external_id: 't-1', recipient: '254712345678', profile_code: '12345', callback: null });
    expect(byExternalId).toEqual([expect.objectContaining({ external_id: 'abc-1', recipient: '254712345678' })]);
    // "a second later: delivered", with the report answered by the demo's own receiver.
    const delivered = await eventually(async () => {
      const [answer] = (await runCommands([commands[4]!])) as [Record<string, unknown>[]];
      const callback = answer[0]?.callback as { state?: string } | null;
      return answer[0]?.status === 'delivered' && callback?.state === 'delivered' ? answer[0] : undefined;
    }, { timeoutMs: 15_000 });
    expect(delivered).toMatchObject({
      status_reason: 'delivered_to_terminal',
      callback: { url: `http://127.0.0.1:${port}/demo/dlr`, state: 'delivered', attempts: 1, last_status_code: 204 },
    });
  });
});
