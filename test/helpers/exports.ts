// The names an entry exports, read with the TypeScript API (TS 7 has none: @typescript/typescript6).
import ts from '@typescript/typescript6';

/** Each entry's source file. */
export const entries = {
  'channel-sdk': 'src/index.ts',
  'channel-sdk/miniprogram': 'src/miniprogram.ts',
  'channel-sdk/server': 'src/server.ts',
  'channel-sdk/testing': 'src/testing.ts',
  'channel-sdk/telemetry': 'src/telemetry.ts',
} as const;

/** The built declarations each entry's `types` condition points at. */
export const builtEntries: Record<keyof typeof entries, string> = {
  'channel-sdk': 'dist/index.d.ts',
  'channel-sdk/miniprogram': 'dist/miniprogram.d.ts',
  'channel-sdk/server': 'dist/server.d.ts',
  'channel-sdk/testing': 'dist/testing.d.ts',
  'channel-sdk/telemetry': 'dist/telemetry.d.ts',
};

/** One program over the given files and what they import. */
export function programOf(files: string[]): ts.Program {
  return ts.createProgram(files, {
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
  });
}

/** Every name `file` exports, a type-only one marked " (type)". */
export function exportsOf(program: ts.Program, file: string): string[] {
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file);
  const module = source && checker.getSymbolAtLocation(source);
  if (!module) throw new Error('no module for ' + file);
  return checker
    .getExportsOfModule(module)
    .map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return symbol.name + (target.flags & ts.SymbolFlags.Value ? '' : ' (type)');
    })
    .toSorted();
}
