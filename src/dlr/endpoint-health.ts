/**
 * Which callback URLs are paused: a URL whose every attempt has failed for `pauseAfterMs`
 * since its last success is paused, and its reports fail without a request until it is
 * resumed (by a replay of the reports of a principal that used it, or by the host's call).
 * Kept in this instance's memory: each instance judges a URL by the attempts it made, and a
 * restart resumes every URL.
 */
import type { Emit } from '../observe/events.js';

/** A URL failing since its last success: since when, and the principals whose reports failed there. */
interface Failing {
  since: number;
  principals: Set<string>;
  paused: boolean;
}

/** Most URLs remembered as failing; past it the oldest are forgotten (an outage of thousands of URLs at once). */
const MAX_TRACKED = 10_000;

/** The pause state of the callback URLs this instance posts to (see the module comment). */
export class EndpointHealth {
  readonly #failing = new Map<string, Failing>();

  constructor(
    private readonly pauseAfterMs: number,
    private readonly emit: Emit,
  ) {}

  /** Whether reports to `url` are paused. */
  isPaused(url: string): boolean {
    return this.#failing.get(url)?.paused === true;
  }

  /** Notes an attempt of `principalId`'s report to `url` at `now`; pauses the URL (with its event) once it has failed for long enough. */
  attempted(url: string, principalId: string, delivered: boolean, now: number): void {
    if (delivered) {
      this.#failing.delete(url);
      return;
    }
    let failing = this.#failing.get(url);
    if (failing === undefined) {
      failing = { since: now, principals: new Set(), paused: false };
      this.#failing.set(url, failing);
      if (this.#failing.size > MAX_TRACKED) this.#failing.delete(this.#failing.keys().next().value!);
    }
    failing.principals.add(principalId);
    if (!failing.paused && now - failing.since >= this.pauseAfterMs) {
      failing.paused = true;
      this.emit('callback.endpoint_paused', { url, failingSince: failing.since, at: now });
    }
  }

  /** Resumes `url` if paused: its failures are counted afresh; whether it was paused. */
  resume(url: string, by: 'replay' | 'api', now: number): boolean {
    const failing = this.#failing.get(url);
    if (failing === undefined) return false;
    this.#failing.delete(url);
    if (failing.paused) this.emit('callback.endpoint_resumed', { url, by, at: now });
    return failing.paused;
  }

  /** Resumes every paused URL a report of `principalId` failed at; the URLs resumed. */
  resumeFor(principalId: string, now: number): string[] {
    const resumed: string[] = [];
    for (const [url, failing] of [...this.#failing]) {
      if (failing.paused && failing.principals.has(principalId) && this.resume(url, 'replay', now)) resumed.push(url);
    }
    return resumed;
  }

  /** The paused URLs, with when each began failing. */
  paused(): { url: string; failingSince: number }[] {
    return [...this.#failing].filter(([, failing]) => failing.paused).map(([url, failing]) => ({ url, failingSince: failing.since }));
  }
}
