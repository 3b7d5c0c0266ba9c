/** What a masked token reads as. */
export const MASK = '[token]';

/** A JWS header: base64url JSON (`eyJ` being `{"`), possibly glued to characters before it. */
const header = /eyJ[\w-]/;

/**
 * `text` with every JWT-shaped run replaced by `[token]`: any JWS compact token (a base64url JSON
 * header, with the characters glued before it, then payload and signature), and any long
 * three-part string. Host names (a few short labels) stay readable.
 *
 * Linear in the text: each maximal run of `[\w.-]` is read once and its dot-separated parts are
 * matched in code (a single regex such as `[\w-]*eyJ...` backtracks quadratically on a long run
 * without a dot: a large error body would take minutes).
 */
export const maskTokens = (text: string): string =>
  text.replace(/[\w.-]+/g, (run) => {
    const parts = run.split('.');
    if (parts.length < 3) return run;
    const out: string[] = [];
    for (let i = 0; i < parts.length; i++) {
      const [a, b, c] = [parts[i], parts[i + 1], parts[i + 2]];
      if (c !== undefined && ((header.test(a) && b) || (a.length >= 16 && b.length >= 16 && c.length >= 16))) {
        out.push(MASK);
        i += 2;
      } else out.push(a);
    }
    return out.join('.');
  });
