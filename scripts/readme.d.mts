export interface ReadmeBlock {
  /** `example`, `check` or `try`, from the comment before the fence; undefined when unmarked. */
  marker?: 'example' | 'check' | 'try';
  /** The example's path, the check's declared names, or the examples a `try` block runs. */
  argument?: string;
  lang: string;
  code: string;
  /** 1-based line of the fence in README.md. */
  line: number;
  start: number;
  length: number;
}
export function readmeBlocks(text: string): ReadmeBlock[];
export function syncExamples(text: string): string;
export const documents: string[];
