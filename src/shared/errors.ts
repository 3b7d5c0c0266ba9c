/**
 * An error made without capturing a stack. For errors made in bulk where a stack would be most
 * of their cost and show only the SDK's own machinery: one signal may cancel thousands of
 * requests at once, and forged pushes are refused at line rate (capturing frames is most of an
 * error's cost).
 */
export function withoutStack<E>(make: () => E): E {
  const E = Error as { stackTraceLimit?: number };
  const limit = E.stackTraceLimit;
  E.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    E.stackTraceLimit = limit;
  }
}
