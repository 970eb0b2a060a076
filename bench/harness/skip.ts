/** A case that cannot run here (a service unreachable, a script that does not build): reported as skipped, with why. */
export class SkipError extends Error {}
