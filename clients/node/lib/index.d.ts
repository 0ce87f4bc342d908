// Types for redis-rl 0.2.0 (hand-written; checked by test/types with tsc --noEmit).

export declare const VERSION: string;

/** The failure policy of a limit: allow, deny (503), or an in-process limit with a share of the global one. */
export type FailurePolicy = 'open' | 'closed' | 'local' | Local;

export declare class Local {
  constructor(share?: number | { share?: number });
  readonly share: number;
}

export interface LimitOptions {
  /** Used in headers (RateLimit-Policy), logs and metrics; default derived, e.g. "gcra-100-per-60000ms". */
  name?: string;
  /** Builds the full Redis key of an identity (default `<prefix><name>:<identity>`, `<prefix>{<tag>}:<name>:<identity>` with a tag). */
  key?: (identity: Identity, ctx: { prefix: string; name: string; tag: string | undefined }) => string;
  /** This limit's failure policy (default: the Limiter's). */
  onError?: FailurePolicy;
  /** The RateLimit-Policy quota unit (qu), e.g. "tokens"; default requests. */
  unit?: string;
}

export type Identity = string | number;
export type Kind = 'GCRA' | 'TOKENBUCKET' | 'SLIDE' | 'LOG' | 'QUOTA' | 'CONCURRENCY';

export declare abstract class Limit {
  readonly kind: Kind;
  readonly command: string;
  readonly name: string;
  readonly onError: FailurePolicy | null;
  readonly unit: string | null;
  /** The largest cost admitted at once from idle (the policy's q). */
  readonly quota: number;
  /** Milliseconds an empty limit takes to be full again (the policy's w). */
  readonly fillMs: number;
  readonly isConcurrency: boolean;
  keyFor(prefix: string, identity: Identity, tag?: string): string;
  /** The parameters it sends, e.g. "Gcra(limit=10, periodMs=1000, burst=20)". */
  describe(): string;
  args(cost: number): readonly string[];
}

export declare class Gcra extends Limit {
  constructor(limit: number, periodMs: number, opts?: LimitOptions & { burst?: number });
  readonly kind: 'GCRA';
  readonly limit: number;
  readonly periodMs: number;
  readonly burst: number | null;
}
export declare class TokenBucket extends Limit {
  constructor(capacity: number, refillTokens: number, refillPeriodMs: number, opts?: LimitOptions);
  readonly kind: 'TOKENBUCKET';
  readonly capacity: number;
  readonly refillTokens: number;
  readonly refillPeriodMs: number;
}
export declare class Slide extends Limit {
  constructor(limit: number, windowMs: number, opts?: LimitOptions);
  readonly kind: 'SLIDE';
  readonly limit: number;
  readonly windowMs: number;
}
export declare class Log extends Limit {
  constructor(limit: number, windowMs: number, opts?: LimitOptions);
  readonly kind: 'LOG';
  readonly limit: number;
  readonly windowMs: number;
}
export type QuotaPeriod = 'HOUR' | 'DAY' | 'WEEK' | 'MONTH' | 'YEAR' | 'hour' | 'day' | 'week' | 'month' | 'year' | number;
export declare class Quota extends Limit {
  constructor(limit: number, period: QuotaPeriod, opts?: LimitOptions & { tz?: string });
  readonly kind: 'QUOTA';
  readonly limit: number;
  readonly period: string | number;
  readonly tz: string | null;
}
export declare class Concurrency extends Limit {
  constructor(limit: number, leaseMs: number, opts?: LimitOptions);
  readonly kind: 'CONCURRENCY';
  readonly limit: number;
  readonly leaseMs: number;
}

export type Source = 'redis' | 'fail_open' | 'fail_closed' | 'local' | 'durable';

export interface DecisionBody {
  error: 'rate_limited' | 'request_too_large' | 'concurrency_limited' | 'rate_limiter_unavailable';
  /** The name of the limit that denied (also its scope); never the identity. */
  limit: string | null;
  scope: string | null;
  quota?: number;
  window_ms?: number;
  unit?: string;
  cost?: number;
  retry_after_ms: number;
  /** Whole seconds, rounded up (absent for request_too_large). */
  retry_after_s?: number;
}

export declare class Decision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  readonly retryAfterMs: number;
  readonly resetAfterMs: number;
  /** The lease id of an allowed Concurrency check, else null. */
  readonly lease: string | null;
  /**
   * maxWaitMs (MAXWAIT): allowed and booked for now + waitMs, so start then
   * (pace() sleeps it); 0 when it may start at once, and for every other call.
   * checkAll: every key's booking has the same start, so the same waitMs.
   */
  readonly waitMs: number;
  /** retryAfterMs === -1: the cost is above the limit, it can never be allowed. */
  readonly never: boolean;
  readonly name: string | null;
  readonly key: string;
  readonly cost: number;
  readonly source: Source;
  readonly error: Error | null;
  readonly failOpen: boolean;
  /** The limit this decision is about (for checkAll: the most restrictive). */
  readonly policy: Limit | null;
  /** checkAll: each check's own decision, in order; else null. */
  readonly decisions: Decision[] | null;
  /** checkAll: the decisions that denied, most restrictive first; else null. */
  readonly deniedBy: Decision[] | null;
  /** 200, 429, 413 (never), 503 (a Concurrency limit or fail-closed). */
  readonly status: number;
  headers(): Record<string, string>;
  /** The JSON error body of a denial; {allowed: true} when allowed. */
  body(): DecisionBody | { allowed: true };
  toJSON(): Record<string, unknown>;
}

export interface DeniedDecision extends Decision {
  readonly allowed: false;
  readonly lease: null;
}

export declare class Lease extends Decision {
  readonly allowed: true;
  readonly id: string;
  readonly lost: boolean;
  readonly released: boolean;
  /** Aborts when the lease is lost, or withLease is aborted or times out. */
  readonly signal: AbortSignal;
  /** performance.now() ms: the last confirmed acquire/renewal send plus leaseMs. */
  readonly validUntil: number;
  /** A renewal failed (or was not acknowledged, with durable) and none confirmed since, or validUntil passed. */
  readonly inDoubt: boolean;
  readonly remainingMs: number;
  readonly durable: DurableSpec | null;
  renew(): Promise<boolean>;
  /** RL.RELEASE once; idempotent. true if a live lease was ended. */
  release(): Promise<boolean>;
}

export declare class Reservation {
  readonly decision: Decision;
  readonly allowed: boolean;
  readonly maxCost: number;
  /** Refunds maxCost - actual exactly once; later calls answer the first call's result. */
  settle(actual: number): Promise<Decision | null>;
}

export interface Metrics {
  onDecision(name: string, decision: Decision, latencySeconds: number): void;
  onError?(name: string, error: Error): void;
  onFallback?(name: string, policy: 'open' | 'closed' | 'local', error: Error): void;
}

export declare class MemoryMetrics implements Metrics {
  decisions: Record<string, number>;
  errors: Record<string, number>;
  fallbacks: Record<string, number>;
  latencies: number[];
  onDecision(name: string, decision: Decision, latencySeconds: number): void;
  onError(name: string, error: Error): void;
  onFallback(name: string, policy: 'open' | 'closed' | 'local', error: Error): void;
}

/** One client library's I/O. */
export interface Adapter {
  kind: string;
  cluster: boolean;
  /** args: strings or arrays of strings (one level), sent flattened; key routes in a cluster. */
  send(command: string, args: readonly (string | readonly string[])[], key?: string, readonly?: boolean): Promise<unknown>;
  /**
   * Optional: send the command and answer a handle whose promise the Limiter's timeout may
   * reject itself (ioredis: its Command), or null to use send(). Saves a promise per call.
   */
  start?(command: string, args: readonly (string | readonly string[])[]): StartedCommand | null;
}

/** A command in flight whose promise its own reject() settles (ioredis's Command is one). */
export interface StartedCommand {
  readonly promise: Promise<unknown>;
  reject(error: Error): void;
}

/** The seam: every Redis call of a Limiter goes through one Backend. */
export interface Backend {
  readonly name: string;
  check(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  /** Optional, with startAll: check() as a StartedCommand (or null: then check()), for the timeout. */
  start?(limit: Limit, key: string, args: readonly string[]): StartedCommand | null;
  /** Optional, with start: all() without peek as a StartedCommand (or null: then all()). */
  startAll?(keys: readonly string[], specs: readonly (readonly string[])[]): StartedCommand | null;
  peek(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  all(keys: readonly string[], specs: readonly (readonly string[])[], peek: boolean): Promise<unknown>;
  release(key: string, id: string): Promise<unknown>;
  renew(key: string, id: string, leaseMs: number): Promise<unknown>;
}

export declare class ModuleBackend implements Backend {
  constructor(client: unknown);
  readonly name: string;
  readonly adapter: Adapter;
  check(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  start(limit: Limit, key: string, args: readonly string[]): StartedCommand | null;
  startAll(keys: readonly string[], specs: readonly (readonly string[])[]): StartedCommand | null;
  peek(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  all(keys: readonly string[], specs: readonly (readonly string[])[], peek: boolean): Promise<unknown>;
  release(key: string, id: string): Promise<unknown>;
  renew(key: string, id: string, leaseMs: number): Promise<unknown>;
}

/** The Lua Functions library (lua/redis_rl.lua, shipped in the package) through FCALL. */
export declare class LuaBackend implements Backend {
  constructor(client: unknown, opts?: { source?: string; version?: string });
  readonly name: 'lua';
  readonly adapter: Adapter;
  /** The library's source and version this backend loads. */
  readonly source: string;
  readonly version: string;
  /** How many times this backend sent FUNCTION LOAD REPLACE. */
  readonly loads: number;
  /** Loads the library when it is missing or older; resolves to the version the server runs. */
  ready(key?: string): Promise<string>;
  check(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  peek(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  all(keys: readonly string[], specs: readonly (readonly string[])[], peek: boolean): Promise<unknown>;
  release(key: string, id: string): Promise<unknown>;
  renew(key: string, id: string, leaseMs: number): Promise<unknown>;
}

/** backend: 'auto': the module when the server knows RL.*, else the Lua library. */
export declare class AutoBackend implements Backend {
  constructor(client: unknown, opts?: { source?: string; version?: string });
  /** 'module' or 'lua' once decided; 'auto' before the first answer. */
  readonly name: string;
  readonly module: ModuleBackend;
  readonly lua: LuaBackend;
  /** Decides now (COMMAND INFO RL.GCRA) and readies the Lua library if chosen. */
  detect(key?: string): Promise<'module' | 'lua'>;
  check(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  start(limit: Limit, key: string, args: readonly string[]): StartedCommand | null;
  startAll(keys: readonly string[], specs: readonly (readonly string[])[]): StartedCommand | null;
  peek(limit: Limit, key: string, args: readonly string[]): Promise<unknown>;
  all(keys: readonly string[], specs: readonly (readonly string[])[], peek: boolean): Promise<unknown>;
  release(key: string, id: string): Promise<unknown>;
  renew(key: string, id: string, leaseMs: number): Promise<unknown>;
}

export declare function adapt(client: unknown): Adapter;

export interface Logger {
  warn(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

/** The strict mode: WAIT replicas timeoutMs after every call that writes, in the same pipeline. */
export interface DurableSpec {
  readonly replicas: number;
  readonly timeoutMs: number;
}
/** true: 1 replica, timeoutMs half the Limiter's; false/null: off. */
export type DurableOption = boolean | null | { replicas?: number; timeoutMs?: number };

export interface LimiterOptions {
  /** Strict mode (default off): allowed decisions too few replicas acknowledged become denials (source "durable"). */
  durable?: DurableOption;
  /** Prefix of every key (default "rl:"). */
  prefix?: string;
  /** Default failure policy (default "closed"). */
  onError?: FailurePolicy;
  /** Timeout of each Redis call in ms (default 100; 0 or null: none). */
  timeoutMs?: number | null;
  metrics?: Metrics | null;
  /** "module" (default, RL.* commands), "lua" (the Functions library via FCALL), "auto" (the module if loaded, else the library), or a Backend object. */
  backend?: 'module' | 'auto' | 'lua' | Backend;
  /** Called on every activation of the failure policy. */
  onFallback?: ((limit: Limit, error: Error, decision: Decision) => void) | null;
  /** Where outages and failed releases are logged (default console; null: nowhere). */
  logger?: Logger | null;
  /**
   * One limit name (or key function), one set of parameters (default true): a
   * limit of a name already used with other parameters (kind, limit, period,
   * burst...) through this Limiter rejects with ParameterConflictError before
   * any round trip. false (limits changed on purpose, e.g. a config reload):
   * a warning is logged once per name instead. At most 10,000 names are remembered.
   */
  strictParams?: boolean;
  /**
   * The client that acquires with waitMs are sent over (RL.ACQUIRE ... WAIT
   * blocks its connection); releases and everything else go over `client`.
   * Default: `client` itself.
   */
  blockingClient?: unknown;
}

export type Check = readonly [Limit, Identity] | readonly [Limit, Identity, number]
  | { limit: Limit; identity: Identity; cost?: number; id?: string };

export interface AcquireOptions {
  cost?: number;
  /** The lease id (default a random UUID). */
  id?: string;
  /**
   * Wait up to this many ms (1 to 600000) for the slot, queued on the server
   * first in, first out (RL.ACQUIRE ... WAIT); 0 or absent: answer at once.
   * The connection is blocked meanwhile: give waiting acquires a client of
   * their own. The Limiter's timeoutMs is extended by it. Not with durable,
   * nor with the Lua backend (NotSupportedError).
   */
  waitMs?: number;
  /** Aborting rejects with its reason; a lease granted afterwards is released by the library. */
  signal?: AbortSignal;
  /** Renew the lease (RL.RENEW) every this many ms while held. */
  renewEveryMs?: number | null;
  /** Called once if a renewal finds the lease gone, or (with the renewer) validUntil passes unconfirmed. */
  onLost?: ((lease: Lease) => void) | null;
  durable?: DurableOption;
}

export interface WithLeaseOptions extends AcquireOptions {
  /** Abandon fn after this many ms (withLease rejects with a DOMException named TimeoutError; the lease is released). */
  timeoutMs?: number;
}

export interface PaceOptions {
  cost?: number;
  /** The longest wait for a start (0 to 1000000 ms); required. */
  maxWaitMs: number;
  signal?: AbortSignal;
  tag?: string;
}

export declare class Limiter {
  constructor(client: unknown, opts?: LimiterOptions);
  readonly prefix: string;
  readonly backend: Backend;
  readonly timeoutMs: number;
  readonly durable: DurableSpec | null;
  /** Writes too few replicas acknowledged in time (durable). */
  readonly durableFailures: number;
  /** Activations of the failure policy. */
  readonly fallbacks: { total: number; open: number; closed: number; local: number };
  key(limit: Limit, identity: Identity, tag?: string): string;
  /** maxWaitMs (Gcra, TokenBucket only; 0 to 1000000): book the earliest start within it (MAXWAIT); see Decision.waitMs. */
  check(limit: Limit, identity: Identity, opts?: number | { cost?: number; id?: string; tag?: string; durable?: DurableOption; maxWaitMs?: number }): Promise<Decision>;
  /** maxWaitMs: every limit must be a Gcra or TokenBucket; all are booked for one start. */
  checkAll(checks: readonly Check[], opts?: { cost?: number; tag?: string; peek?: boolean; durable?: DurableOption; maxWaitMs?: number }): Promise<Decision>;
  peek(limit: Limit, identity: Identity, opts?: number | { cost?: number; tag?: string; maxWaitMs?: number }): Promise<Decision>;
  /**
   * Books a start within maxWaitMs (Gcra, TokenBucket), sleeps until it and
   * resolves to the Decision. Denied (beyond maxWaitMs, never, fail-closed):
   * rejects with RateLimited. signal aborting while it sleeps refunds the
   * booked units and rejects with the signal's reason.
   */
  pace(limit: Gcra | TokenBucket, identity: Identity, opts: PaceOptions): Promise<Decision>;
  /** How pace() sleeps; replace it on an instance to drive time in tests. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  refund(limit: Limit, identity: Identity, amount: number, opts?: { tag?: string; durable?: DurableOption }): Promise<Decision>;
  acquire(limit: Concurrency, identity: Identity, opts?: AcquireOptions): Promise<Lease | DeniedDecision>;
  withLease<T>(limit: Concurrency, identity: Identity, fn: (lease: Lease) => T | Promise<T>, opts?: WithLeaseOptions): Promise<T>;
  release(limit: Concurrency, identity: Identity, id: string, opts?: { tag?: string }): Promise<boolean>;
  /** Refunds several limits in one RL.ALL (REFUND in each spec), all or nothing; errors raised, never retried. */
  refundAll(refunds: readonly (readonly [Limit, Identity, number] | { limit: Limit; identity: Identity; amount: number })[],
    opts?: { tag?: string }): Promise<Decision>;
  reserve(limit: Limit, identity: Identity, maxCost: number): Promise<Reservation>;
  withReservation<T>(limit: Limit, identity: Identity, maxCost: number, fn: (r: Reservation) => T | Promise<T>): Promise<T>;
}

export declare class RateLimited extends Error {
  constructor(decision: Decision, message?: string);
  readonly decision: Decision;
  readonly retryAfterMs: number;
}
export declare class CrossSlotError extends Error {
  readonly keys: string[];
  readonly slots: number[];
}
export declare class RedisTimeoutError extends Error {
  readonly code: 'ETIMEDOUT';
  readonly timeoutMs: number;
}
/** A limit name used with two sets of parameters through one Limiter (before any round trip). */
export declare class ParameterConflictError extends RangeError {
  readonly code: 'ERR_RL_PARAMETER_CONFLICT';
  /** The limit of this call. */
  readonly limit: Limit;
  /** The limit whose parameters the name was used with before. */
  readonly previous: Limit;
}

/** WAIT or MAXWAIT with a backend that cannot block or book (the Lua library). */
export declare class NotSupportedError extends Error {
  readonly code: 'ERR_RL_NOT_SUPPORTED';
  readonly feature: 'WAIT' | 'MAXWAIT';
  readonly backend: string;
}
/** The server does not know the RL.* commands (the module is not loaded); never answered by a failure policy. */
export declare class ModuleNotLoadedError extends Error {
  readonly cause: Error;
}
/** A write sent with durable was acknowledged by fewer replicas than asked (it did happen on the master). */
export declare class NotDurableError extends Error {
  readonly acks: number;
  readonly replicas: number;
  readonly decision: Decision | null;
}
export declare class LeaseLostError extends Error {
  readonly lease: Lease;
}

export interface RetryBudgetOptions {
  name?: string;
  /** Retries per request the fleet may make (default 0.1). */
  ratio?: number;
  /** Retries banked at most (default 10; a new budget starts full). */
  burst?: number;
  /** Units per retry (default 1000). */
  scale?: number;
  /** The identity of the budget's key (default "fleet"). */
  identity?: string;
}

export declare class RetryBudget {
  constructor(limiter: Limiter, name?: string, opts?: RetryBudgetOptions);
  constructor(limiter: Limiter, opts: RetryBudgetOptions);
  readonly name: string;
  readonly ratio: number;
  readonly limit: TokenBucket;
  deposit(): Promise<void>;
  trySpend(): Promise<boolean>;
  available(): Promise<number>;
}

export interface RetryOptions {
  budget?: RetryBudget | null;
  maxAttempts?: number;
  baseMs?: number;
  capMs?: number;
  maxWaitMs?: number;
  signal?: AbortSignal;
  rand?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** ms the outcome (a value, or the error fn threw) asks to wait before a retry, or null: do not retry. */
  retryAfter?: (outcome: unknown) => number | null;
}
export declare function retry<T>(fn: (attempt: number) => T | Promise<T>, opts?: RetryOptions): Promise<T>;
export declare function parseRetryAfter(value: string | null | undefined, now?: () => number): number | null;

/** concurrency: whether the sixth RESP2 field is a lease (true) or wait_ms (false); absent: by its type. */
export declare function parseReply(reply: unknown, concurrency?: boolean): {
  allowed: boolean; limit: number; remaining: number; retryAfterMs: number; resetAfterMs: number; lease: string | null;
  waitMs: number;
};
export declare function parseAllReply(reply: unknown, kinds?: readonly boolean[]): {
  allowed: boolean; retryAfterMs: number; limits: ReturnType<typeof parseReply>[];
};
export declare function keySlot(key: string | Buffer): number;

/** The in-process GCRA behind the "local" failure policy (integer µs, monotonic clock unless given). */
export declare class LocalBucket {
  constructor(capacity: number, fillMs: number, clock?: () => number);
  readonly capacity: number;
  take(cost?: number): { allowed: boolean; limit: number; remaining: number; retryAfterMs: number; resetAfterMs: number; lease: null };
}

export interface MiddlewareOptions<Req> {
  limits: Limit | readonly Limit[];
  /** A TRUSTED identity (authenticated user, API key id, tenant), never a raw X-Forwarded-For; null: not limited. */
  key: (req: Req) => Identity | null | undefined | Promise<Identity | null | undefined>;
  cost?: number | ((req: Req) => number | Promise<number>);
  tag?: string | ((req: Req, identity: Identity) => string | undefined);
  /** Send the RateLimit fields on allowed responses too (default true). */
  headers?: boolean;
}

// Structural types, so neither express nor fastify types are needed to use these.
export declare function expressRateLimit<Req = any>(limiter: Limiter, opts: MiddlewareOptions<Req>):
  (req: Req, res: any, next: (err?: unknown) => void) => void;
export declare function fastifyRateLimit<Req = any>(limiter: Limiter, opts: MiddlewareOptions<Req>):
  (request: Req, reply: any) => Promise<unknown>;
