/**
 * sms-outbox: the public send API of an SMS gateway as one Express router.
 * This file only re-exports; each name is documented where it is defined.
 */
export { createSmsRouter, type SmsRouter } from './router/create-router.js';
export type { AppliedLimit, OperatorView, SpendPeriodKeys } from './router/operator-view.js';
export type { SmsRouterOptions } from './router/options.js';
export type { BacklogOptions, LimitOptions, IdempotencyOptions, ServerErrorsOption } from './http/options.js';
export type { WorkerOptions, RetentionOptions } from './worker/options.js';
export type { DlrOptions } from './dlr/options.js';
export type { DlrPayload, DlrData, DlrPart, FlatDlrPayload, ReportFormat } from './dlr/payload.js';
export type { InboundPayload, InboundData } from './dlr/webhook.js';
export type { CallbackControls } from './dlr/controls.js';
export type { InboundOptions, OptOutConfirmation } from './inbound/options.js';
export type { OptOutList } from './inbound/opt-out-list.js';
export type { InboundOwner, InboundOwnerResolver } from './inbound/owners.js';

export { staticKeys, type StaticKey, type StaticKeyOfPrincipal } from './auth/static-keys.js';
export { hasScope, type Principal, type Scope, type ScopeAlias, type Permission, type ExpiresAt, type KeyVerifier } from './auth/principal.js';
export {
  staticProfiles,
  principalProfiles,
  defaultSender,
  type Profile,
  type ProfileResolver,
  type StaticProfile,
} from './auth/profiles.js';

export { countSms, smartEncode, splitSms, type CountOptions, type SmsCount } from './sms/segments.js';
export { readNumber, type NumberReading } from './numbers/read-number.js';
export { numberProblem, NUMBER_POLICIES, type NumberPolicy, type NumberProblem } from './numbers/policy.js';

export * from './lifecycle/states.js';
export { submitAttempts, type AttemptFields } from './lifecycle/attempts.js';
export type * from './storage/contract.js';
export { MemoryStorage } from './storage/memory/adapter.js';
export type * from './storage/record-store.js';
export type * from './storage/inbound-store.js';
export { isRecordStore } from './storage/record-store.js';
export { createLedger } from './ledger/index.js';
export { OPTIONAL_STORAGE_METHODS } from './storage/optional-methods.js';
export { InsufficientCreditError, isInsufficientCredit, refundUnits, type RefundPolicy, type EndedMessage } from './lifecycle/credit.js';
export { CounterLimitError, isCounterLimit } from './lifecycle/counter-limit.js';
export { REDACTED_TEXT, type RetainText } from './lifecycle/retain-text.js';
export { ERASED_NUMBER, eraseAnswerBody, eraseInbound, eraseMessage } from './lifecycle/erase-record.js';
export type { EraseRequest, EraseSummary } from './router/erase.js';
export { CANCEL_LEASE_GRACE_MS, CANCELLED, leaseBarsCancel, VALIDITY_ELAPSED, validityElapsed } from './lifecycle/timing.js';
export { fairTags, PRIORITY_RANK } from './lifecycle/fair-tags.js';
export type { CreditAccounts } from './http/credit.js';
export type { CreditHook, CreditOptions, CreditRefund, CreditRequest, SpendCapsOptions } from './http/options.js';

export * from './delivery/contract.js';
export { SimulatorDelivery, type SimulatorOptions } from './delivery/simulator.js';
export { normalizeCarrierId, carrierIdSpellings, qualifyCarrierId } from './delivery/carrier-ids.js';
export { RoutedDelivery, type RouteState } from './delivery/routes/routed-delivery.js';
export type { RoutedDeliveryOptions, RouteOptions, RouteSelection } from './delivery/routes/options.js';
export { RedisSubmitPermits, type RedisSubmitPermitsOptions, type SubmitPermits } from './delivery/redis-submit-permits.js';

export type {
  RateLimitHeaders,
  RateLimitOptions,
  RequestLimitOptions,
  MessageBudgetOptions,
  FailedAuthOptions,
  PerKeyLimit,
  RateLimitStoreName,
} from './http/rate-limit/options.js';
export { MemoryBudgetStore, type BudgetStore, type BudgetTake } from './http/rate-limit/budget-store.js';
export { MemoryRateLimitStore } from './http/rate-limit/memory-windows.js';
export { RedisBudgetStore, type RedisBudgetStoreOptions } from './http/rate-limit/redis-budget-store.js';
export type { SendRedisCommand } from './util/redis-script.js';

export * from './observe/events.js';
export {
  ERRORS,
  EVENT_ERRORS,
  EventError,
  OPTION_ERRORS,
  OptionError,
  SmsError,
  type ErrorCode,
  type EventErrorCode,
  type OptionErrorCode,
} from './errors.js';
export { buildOpenApiDocument, type OpenApiContact, type OpenApiDocument, type OpenApiDocumentOptions } from './openapi/document.js';
export type { OpenApiOptions } from './openapi/options.js';
export type { SmsLogger, LogMethod } from './observe/options.js';
export type { MetricsOptions, PromClient, PromRegistry, PromCounter, PromHistogram, PromGauge, PromMetricConfig } from './observe/options.js';
