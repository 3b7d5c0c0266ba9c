import type { BuildOptions, BuildResult, OutputFile } from 'esbuild';

/** esbuild's options for miniprogram_dist/index.js. */
export declare const miniprogramBuild: BuildOptions;
/**
 * Builds the WeChat bundle of `source` (default src/miniprogram.ts); `{ write: false }` keeps it in
 * memory (`outputFiles[0].text`).
 */
export declare function buildPlainCommonJs(options: BuildOptions & { write: false }, source?: string): Promise<BuildResult & { outputFiles: OutputFile[] }>;
export declare function buildPlainCommonJs(options?: BuildOptions, source?: string): Promise<BuildResult>;
