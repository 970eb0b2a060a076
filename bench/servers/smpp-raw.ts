/**
 * The raw `smpp` library rate, the ceiling the SMPP adapter is compared with: one
 * transceiver bind to the SMSC at BENCH_SMPP_HOST:BENCH_SMPP_PORT, BENCH_MESSAGES
 * submit_sm with registered_delivery 1 and at most BENCH_WINDOW (default 50, the
 * adapter's default) awaiting their response, every deliver_sm answered. First
 * BENCH_WARMUP messages (default 0) go through untimed, so the timed ones run on compiled
 * code as the router's do after its warm-up. Prints one JSON line
 * `{ event: 'done', messages, receipts, seconds, cpuSec }`, timed from the first timed submit
 * to its last receipt (`cpuSec`: the process's CPU over that time), and exits. Runs as a
 * child pinned like the router server.
 */
import smpp from 'smpp';

const host = process.env.BENCH_SMPP_HOST ?? '127.0.0.1';
const port = Number(process.env.BENCH_SMPP_PORT);
const total = Number(process.env.BENCH_MESSAGES ?? 10_000);
const window = Number(process.env.BENCH_WINDOW ?? 50);
const deadlineMs = Number(process.env.BENCH_DEADLINE_MS ?? 60_000);
const warmup = Number(process.env.BENCH_WARMUP ?? 0);

const session = smpp.connect({ host, port });
// The same socket option the adapter sets, so the comparison is of the code, not of Nagle.
session.on('connect', () => session.socket.setNoDelay(true));
session.on('error', (error: unknown) => {
  process.stdout.write(`${JSON.stringify({ event: 'error', message: String(error) })}\n`);
  process.exit(1);
});

/** Messages (and receipts) of the current phase: the warm-up, then the timed one. */
let goal = warmup;
let sent = 0;
let inFlight = 0;
let receipts = 0;
let started = 0;
/** The process's CPU use when the timed phase began. */
let cpuAtStart = process.cpuUsage();

function finish(): void {
  // A deadline inside the warm-up leaves nothing timed.
  const timedReceipts = goal === total ? receipts : 0;
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuAtStart);
  const cpuSec = (cpu.user + cpu.system) / 1e6;
  process.stdout.write(`${JSON.stringify({ event: 'done', messages: total, receipts: timedReceipts, seconds, cpuSec })}\n`);
  session.destroy();
  process.exit(0);
}

/** Starts the timed phase once the warm-up's receipts are all in. */
function timed(): void {
  goal = total;
  sent = 0;
  receipts = 0;
  started = performance.now();
  cpuAtStart = process.cpuUsage();
  pump();
}

function pump(): void {
  while (inFlight < window && sent < goal) {
    sent++;
    inFlight++;
    const pdu = new smpp.PDU('submit_sm', {
      source_addr: '12345',
      source_addr_ton: 3,
      destination_addr: `2547${String(10_000_000 + sent)}`,
      dest_addr_ton: 1,
      dest_addr_npi: 1,
      registered_delivery: 1,
      short_message: 'Your code is 4821. Asante!',
    });
    session.send(pdu, () => {
      inFlight--;
      pump();
    });
  }
}

session.on('deliver_sm', (pdu) => {
  session.send(pdu.response());
  if ((Number(pdu.esm_class) & 0x3c) !== 0x04 || ++receipts < goal) return;
  if (goal === total) finish();
  else timed();
});

session.send(new smpp.PDU('bind_transceiver', { system_id: 'bench', password: process.env.BENCH_SMPP_PASSWORD ?? 'secret' }), (response) => {
  if (response.command_status !== 0) {
    process.stdout.write(`${JSON.stringify({ event: 'error', message: `bind failed: status ${response.command_status}` })}\n`);
    process.exit(1);
  }
  setTimeout(finish, deadlineMs).unref();
  if (warmup > 0) pump();
  else timed();
});
