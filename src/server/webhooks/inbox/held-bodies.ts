// How long an inbox holds a push's body after its append settled: the Redis inbox's append gives
// up at timeoutMs, but its client keeps the command, the body with it, until Redis answers (a
// frozen Redis: for as long as it is frozen). The handler counts the body against
// maxBufferedBytes until then, so that pushes answered 503 cannot pin memory past that budget.

const held = new WeakMap<object, PromiseLike<unknown>>();

/** Says that `push`'s body stays held until `until` settles. */
export function holdBody(push: object, until: PromiseLike<unknown>): void {
  held.set(push, until);
}

/** What holds `push`'s body beyond its append, if anything. */
export function bodyHeldBy(push: object): PromiseLike<unknown> | undefined {
  return held.get(push);
}
