// The seam between the core and the telemetry plug-in (`channel-sdk/telemetry`): the hooks the
// attempt loop and the token obtainer call, and what `clientTelemetry()` hands createClient. The
// core holds no span code, attribute name or tracer call: an app without the plug-in carries none.
/** The hooks of one client, built once by the plug-in's `attach`. */
export interface ClientTelemetry {
  /**
   * Starts the span of attempt `attempt` of `method url` (`resend`: why it follows another, the
   * retry event's reason) and names it in `headers.traceparent` unless the caller set one. Returns
   * what ends it: with the status, or with the failure's error code.
   */
  attempt(start: AttemptStart): (status?: number, error?: string) => void;
  /** The context active as a call starts: its spans' parent. */
  active(): unknown;
  /** Runs `f` (which may call the provider synchronously) with `parent` as the provider span's parent. */
  within<T>(parent: unknown, f: () => T): T;
  /** Runs one tokenProvider call under its span, timed and counted; `run` is called exactly once. */
  provider<T>(call: ProviderCall<T>): Promise<T>;
  /** A 401 is being replayed with a new token. */
  replay(): void;
}

/** One attempt about to be sent, as the attempt hook is told it: one object, so a field added reorders no call. */
export interface AttemptStart {
  method: string;
  url: string;
  /** 1 for the first attempt of a call. */
  attempt: number;
  resend: string | undefined;
  /** The attempt's own headers, where `traceparent` is written. */
  headers: Record<string, string>;
  /** What `active()` answered as the call started. */
  parent: unknown;
}

/** One tokenProvider call, as the provider hook is told it. */
export interface ProviderCall<T> {
  forced: boolean;
  /** The call's TokenReason (a string here: types.ts imports this file). */
  reason: string;
  run: () => Promise<T>;
}

/** What a client tells the plug-in as it attaches it. */
export interface TelemetryHost {
  /** Masks the tokens the client knows (in URLs). */
  redact(text: string): string;
  /** The global object, where the OpenTelemetry API registers itself; absent on mini-programs. */
  scope?: object;
}

/**
 * The `telemetry` option of `createClient`: `clientTelemetry({ tracer, meter })` from
 * `channel-sdk/telemetry`. A plug-in, so that an app that traces nothing carries no telemetry code.
 */
export interface ClientTelemetryPlugin {
  /** Called once by `createClient`: the hooks its calls run. */
  attach(host: TelemetryHost): ClientTelemetry;
}
