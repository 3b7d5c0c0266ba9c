export interface ReadmeBlock {
  /** `example` or `check`, from the comment before the fence; undefined when unmarked. */
  marker?: 'example' | 'check';
  /** The example's path, or the check's declared names. */
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
