/**
 * `sms-outbox/dashboard`: the operator console, an Express router the host mounts behind its
 * own staff check (docs/dashboard.md).
 */
export { createSmsDashboard } from './dashboard/create-dashboard.js';
export type { DashboardAuth, SmsDashboardOptions } from './dashboard/options.js';
export { CSRF_COOKIE, CSRF_FIELD, DASHBOARD_REFUSALS } from './dashboard/guard.js';
