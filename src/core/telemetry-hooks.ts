// The seam between the core and the telemetry plug-in (`channel-sdk/telemetry`): the hooks the
// attempt loop and the token obtainer call, and what `clientTelemetry()` hands createClient. The
// core holds no span code, attribute name or tracer call: an app without the plug-in carries none.
/** The hooks of one client, built once by the plug-in's `attach`. */
export interface ClientTelemetry {
  /**
   * Starts the span of attempt `n` of `method url` (`resend`: why it follows another, the retry
   * event's reason) and names it in `headers.traceparent` unless the caller set one. Returns
   * what ends it: with the status, or with the failure's error code.
   */
  attempt(
    method: string,
    url: string,
    n: number,
    resend: string | undefined,
    headers: Record<string, string>,
    parent: unknown,
  ): (status?: number, error?: string) => void;
  /** The context active as a call starts: its spans' parent. */
  active(): unknown;
  /** Runs `f` (which may call the provider synchronously) with `parent` as the provider span's parent. */
  within<T>(parent: unknown, f: () => T): T;
  /**
   * Runs one tokenProvider call under its span, timed and counted; `run` is called exactly once.
   * `reason` is the call's TokenReason (a string here: types.ts imports this file).
   */
  provider<T>(forced: boolean, reason: string, run: () => Promise<T>): Promise<T>;
  /** A 401 is being replayed with a new token. */
  replay(): void;
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
