/**
 * Runs `test/fixtures/gateway-host.ts` (the simulated carrier, or `SmppDelivery` to an
 * SMSC the test runs when {@link HostConfig.smsc} is given) as a child process: the router on a real HTTP port with durable storage, which a test may
 * kill with SIGKILL at any moment. The child's stdout is a stream of JSON lines
 * ({@link HostLine}); this module parses them as they come.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DlrOptions, RefundPolicy, SimulatorOptions, WorkerOptions } from '../../src/index.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const hostScript = join(root, 'test', 'fixtures', 'gateway-host.ts');

/** The environment variable that carries a {@link HostConfig} (as JSON) to the child. */
export const HOST_CONFIG_ENV = 'SMS_OUTBOX_E2E_HOST';

/** The one API key the host accepts, its principal and its profile. */
export const HOST_KEY = 'e2e-key-0123456789';
/** The principal id of {@link HOST_KEY}: what storage lookups are scoped to. */
export const HOST_PRINCIPAL = 'e2e';
/** The profile code {@link HOST_KEY} owns. */
export const HOST_PROFILE = '12345';

/**
 * The PostgreSQL `application_name` of a host's connections: `pg_stat_activity` then tells
 * when the server has finished the statements of a host that was killed.
 */
export function hostApplicationName(instanceId: string | undefined): string {
  return `sms-outbox-e2e-${instanceId ?? 'host'}`;
}

/**
 * The file where a host on MariaDB writes the server's thread id of each connection it
 * opens, before using it: the processlist then tells when the server has finished the
 * statements of a host that was killed.
 */
export function hostMysqlThreadsFile(instanceId: string | undefined, tablePrefix: string): string {
  return join(tmpdir(), `sms-outbox-e2e-${tablePrefix}${instanceId ?? 'host'}.threads`);
}

/** Where the host keeps its messages (on MariaDB: the ledger over `MysqlRecordStore`, tables under `tablePrefix`). */
export type HostStorage = { kind: 'sqlite'; path: string } | { kind: 'postgres'; schema: string } | { kind: 'mysql'; tablePrefix: string };

/** What the host process runs with; plain JSON, so it fits in an environment variable. */
export interface HostConfig {
  /** The storage adapter and where it points. */
  storage: HostStorage;
  /** The router's instance id (the lease owner). Default: random. */
  instanceId?: string;
  /** Worker options, over the host's short defaults. */
  worker?: WorkerOptions;
  /** Simulator options, over the host's short defaults (ignored with `smsc`). */
  simulator?: SimulatorOptions;
  /**
   * Use `SmppDelivery` to the SMSC on 127.0.0.1 at this port instead of the simulator. The
   * SMSC must be the test's own child, not the host's, so that it outlives a host kill
   * with what it still has to deliver (test/fixtures/smsc.ts, password `secret`).
   */
  smsc?: { port: number };
  /** Delivery report options, over the host's short defaults (loopback allowed). */
  dlr?: DlrOptions;
  /** Charge the storage's credit ledger (`credit: { ledger: 'storage', refunds }`). Default: no credit. */
  credit?: { refunds?: RefundPolicy };
}

/** One JSON line the host prints on stdout. */
export type HostLine =
  | { event: 'listening'; port: number }
  /** The carrier accepted a part (printed after its ack, before it is recorded). */
  | { event: 'submit'; ref: string; index: number; carrierId: string }
  /** The router emitted `error`. */
  | { event: 'error'; source: string; ref?: string; message: string }
  | { event: 'closed' };

/** A part the carrier accepted, as the host printed it. */
export type SubmitLine = Extract<HostLine, { event: 'submit' }>;

/** A running host child. */
export interface HostProcess {
  /** Its port on 127.0.0.1. */
  port: number;
  /** `http://127.0.0.1:<port>/api/outbox` */
  base: string;
  /** Every part the carrier accepted through this host, in order (complete lines only). */
  submits: SubmitLine[];
  /** Every `error` event of its router. */
  errors: Extract<HostLine, { event: 'error' }>[];
  /** Its stderr so far (for failure messages). */
  stderr(): string;
  /** Kills it with SIGKILL and resolves once it is gone. */
  kill(): Promise<void>;
  /** Asks it to close cleanly (SIGTERM); SIGKILL if it has not exited within `ms`. */
  stop(ms?: number): Promise<void>;
}

/**
 * Starts a host with `config` and resolves once it listens. Rejects (and kills the child)
 * if it exits first or does not listen within `startMs`.
 */
export function startHost(config: HostConfig, startMs = 20_000): Promise<HostProcess> {
  // `node --import tsx` rather than `npx tsx`: one process, so SIGKILL hits the host itself.
  const child = spawn(process.execPath, ['--import', 'tsx', hostScript], {
    cwd: root,
    env: { ...process.env, [HOST_CONFIG_ENV]: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // `close`, not `exit`: it comes after the child's stdout has ended, so every line the host
  // printed before it died has been read (a test that kills a host reads what it submitted).
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));

  const host: HostProcess = {
    port: 0,
    base: '',
    submits: [],
    errors: [],
    stderr: () => stderr,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: async (ms = 10_000) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const hard = setTimeout(() => child.kill('SIGKILL'), ms);
      await exited;
      clearTimeout(hard);
    },
  };

  return new Promise<HostProcess>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`host did not listen within ${startMs} ms; stderr: ${stderr}`));
    }, startMs);
    const onExit = (code: number | null, signal: string | null) => {
      clearTimeout(timer);
      reject(new Error(`host exited before listening (code ${code}, signal ${signal}); stderr: ${stderr}`));
    };
    child.once('exit', onExit);
    readLines(child, (line) => {
      if (line.event === 'submit') host.submits.push(line);
      else if (line.event === 'error') host.errors.push(line);
      else if (line.event === 'listening') {
        clearTimeout(timer);
        child.off('exit', onExit);
        host.port = line.port;
        host.base = `http://127.0.0.1:${line.port}/api/outbox`;
        resolve(host);
      }
    });
  });
}

/** Calls `onLine` with each complete JSON line of the child's stdout; a line cut off by a kill is dropped. */
function readLines(child: ChildProcess, onLine: (line: HostLine) => void): void {
  let pending = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    pending += chunk;
    let end = pending.indexOf('\n');
    while (end !== -1) {
      const text = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (text.startsWith('{')) onLine(JSON.parse(text) as HostLine);
      end = pending.indexOf('\n');
    }
  });
}
