// The public surface: one API report per entry point of package.json `exports` (api/<name>.api.md),
// written by API Extractor from the declarations the build emits (tsconfig.build.json).
//   npm run api              rewrites the reports after a change to the surface (commit them)
//   npm run api -- --check   fails, printing the diff, when the surface differs from the reports
// Both fail when a name is exported from two entry points: each name has one owner. A report ends
// with the types its signatures name that another entry point owns, and those no entry point
// exports (a user cannot import them), so either kind of change shows in review, and lists the names
// whose TSDoc says `@experimental` (API Extractor knows the tag but reports no release stage for it).
// A known API Extractor limitation: a name that is both a value and a type (a zod schema and its
// inferred type) is reported with its value even where the entry point exports only the type.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  CompilerState,
  Extractor,
  ExtractorConfig,
  ExtractorLogLevel,
  ExtractorMessageCategory,
  type ExtractorMessage,
  type IConfigFile,
} from '@microsoft/api-extractor';
import ts from 'typescript';

const root = path.resolve(__dirname, '..');
const reportFolder = path.join(root, 'api');

interface Entry {
  /** `toolplane`, `toolplane/workflow`, ... */
  specifier: string;
  /** The report's file name: `toolplane.api.md`, `toolplane-workflow.api.md`, ... */
  report: string;
  /** The source file the entry point is built from, relative to the root: `index.ts`, ... */
  source: string;
  /** Its emitted declarations, relative to the declaration folder: `index.d.ts`, ... */
  declarations: string;
}

/** The entry points package.json `exports` declares with types. */
export function entryPoints(): Entry[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    name: string;
    exports: Record<string, string | { types?: string }>;
  };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    const types = typeof target === 'string' ? undefined : target.types;
    if (!types) return []; // ./package.json
    const declarations = path.relative('lib', types);
    const specifier = subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`;
    return [
      {
        specifier,
        report: `${specifier.replace(/\//g, '-')}.api.md`,
        source: declarations.replace(/\.d\.ts$/, '.ts'),
        declarations,
      },
    ];
  });
}

export interface SurfaceResult {
  /** Reports that differ from the committed ones, with their diffs (check mode; else rewritten). */
  changed: { report: string; diff: string }[];
  /** Broken rules (a name exported twice) and API Extractor's own errors and warnings. */
  problems: string[];
}

export function apiReport({ check }: { check: boolean }): SurfaceResult {
  // Outside the clone (API Extractor takes declarations under node_modules for a dependency's),
  // beside a link to the project's node_modules, through which they resolve their imports.
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'toolplane-api-'));
  try {
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(work, 'node_modules'), 'dir');
    fs.copyFileSync(path.join(root, 'package.json'), path.join(work, 'package.json'));
    return surface(work, check);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

function surface(work: string, check: boolean): SurfaceResult {
  const dts = path.join(work, 'dts');
  const entries = entryPoints();
  emitDeclarations(entries, dts);
  const configs = entries.map((entry) => [entry, extractorConfig(entry, work, dts)] as const);
  // One program for every entry point, read here too.
  const compilerState = CompilerState.create(configs[0]![1], {
    additionalEntryPoints: configs.map(([, c]) => c.mainEntryPointFilePath),
  });
  // API Extractor's own TypeScript, whose checker answers the same questions as ours.
  const { exported, declaredAs, experimental } = exportsOf(compilerState.program as ts.Program, entries, dts);
  const problems: string[] = [];

  const byName = new Map<string, Entry[]>();
  for (const [entry, names] of exported)
    for (const name of names.keys()) byName.set(name, [...(byName.get(name) ?? []), entry]);
  for (const [name, owners] of byName)
    if (owners.length > 1)
      problems.push(`${name} is exported from ${owners.map((e) => e.specifier).join(' and ')}: give it one owner`);
  const ownerOf = new Map<string, Entry>();
  for (const [entry, names] of exported) for (const ids of names.values()) for (const id of ids) ownerOf.set(id, entry);

  const changed: SurfaceResult['changed'] = [];
  for (const [entry, config] of configs) {
    const elsewhere = new Set<string>();
    const nowhere = new Set<string>();
    Extractor.invoke(config, {
      localBuild: false, // writes the report to the temporary folder; compared below
      compilerState,
      messageCallback: (message: ExtractorMessage) => {
        message.handled = true;
        if (message.messageId === 'ae-forgotten-export') {
          const name = /The symbol "([^"]+)"/.exec(message.text)?.[1] ?? '?';
          const ids = declaredAs(message.sourceFilePath ?? '', name);
          const owner = ids.map((id) => ownerOf.get(id)).find((e) => e !== undefined);
          if (owner) elsewhere.add(`\`${name}\` (${owner.specifier})`);
          else {
            const files = [...new Set(ids.map((id) => path.relative(dts, id.split('#')[0]!)))];
            nowhere.add(`\`${name}\` (${files.join(', ') || '?'})`);
          }
          return;
        }
        // Whether the report changed is told below (console-api-report-changed, -created, -copied).
        if (message.category === ExtractorMessageCategory.Console && message.logLevel !== ExtractorLogLevel.Error)
          return;
        if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning)
          problems.push(`${entry.specifier}: ${message.formatMessageWithLocation(work)}`);
      },
    });
    const generated = path.join(config.reportTempFolder, entry.report);
    const report =
      fs.readFileSync(generated, 'utf8') +
      experimentalSection(experimental(entry)) +
      referencesSection(elsewhere, nowhere);
    fs.writeFileSync(generated, report);
    const committed = path.join(reportFolder, entry.report);
    if (fs.existsSync(committed) && fs.readFileSync(committed, 'utf8') === report) continue;
    if (check) changed.push({ report: path.relative(root, committed), diff: diffOf(committed, generated) });
    else {
      fs.mkdirSync(reportFolder, { recursive: true });
      fs.writeFileSync(committed, report);
      changed.push({ report: path.relative(root, committed), diff: '' });
    }
  }
  return { changed, problems };
}

/** The declarations `npm run build` emits for the entry points, without type-checking (`tsc --noEmit` does). */
function emitDeclarations(entries: Entry[], dts: string): void {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(root, 'tsconfig.build.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  );
  if (!parsed) throw new Error('tsconfig.build.json could not be read');
  const program = ts.createProgram({
    rootNames: entries.map((e) => path.join(root, e.source)),
    options: {
      ...parsed.options,
      outDir: dts,
      declaration: true,
      emitDeclarationOnly: true,
      declarationMap: false,
      sourceMap: false,
      noCheck: true,
      incremental: false,
    },
  });
  const { diagnostics } = program.emit();
  if (diagnostics.length > 0)
    throw new Error(
      ts.formatDiagnostics(diagnostics, { ...ts.sys, getCanonicalFileName: (f) => f, getNewLine: () => '\n' }),
    );
}

/**
 * The names each entry point exports with the declarations behind them (`file#name`), and a lookup of
 * what a name used in a declaration file stands for.
 */
function exportsOf(program: ts.Program, entries: Entry[], dts: string) {
  const checker = program.getTypeChecker();
  const idsOf = (symbol: ts.Symbol): string[] => {
    // Symbol flags are numbers that stay put across TypeScript versions.
    const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    return (target.declarations ?? []).map((d) => `${path.resolve(d.getSourceFile().fileName)}#${target.name}`);
  };
  const exported = new Map(
    entries.map((entry) => {
      const file = program.getSourceFile(path.join(dts, entry.declarations))!;
      const names = new Map<string, string[]>();
      for (const symbol of checker.getExportsOfModule(checker.getSymbolAtLocation(file)!))
        names.set(symbol.name, idsOf(symbol));
      return [entry, names] as const;
    }),
  );
  const everything = ts.SymbolFlags.Type | ts.SymbolFlags.Value | ts.SymbolFlags.Namespace | ts.SymbolFlags.Alias;
  const declaredAs = (file: string, name: string): string[] => {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolsInScope(source, everything).find((s) => s.name === name);
    return symbol ? idsOf(symbol) : [];
  };
  /** The names an entry point exports whose declaration (any of them, for a value and a type of one name) is `@experimental`. */
  const experimental = (entry: Entry): string[] => {
    const file = program.getSourceFile(path.join(dts, entry.declarations))!;
    return checker
      .getExportsOfModule(checker.getSymbolAtLocation(file)!)
      .filter((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return (target.declarations ?? []).some((d) =>
          ts.getJSDocTags(d).some((t) => t.tagName.text === 'experimental'),
        );
      })
      .map((symbol) => symbol.name)
      .sort();
  };
  return { exported, declaredAs, experimental };
}

function extractorConfig(entry: Entry, work: string, dts: string): ExtractorConfig {
  const configObject: IConfigFile = {
    projectFolder: work,
    mainEntryPointFilePath: path.join(dts, entry.declarations),
    compiler: {
      overrideTsconfig: {
        compilerOptions: {
          target: 'ES2022',
          module: 'node16',
          moduleResolution: 'node16',
          strict: true,
          esModuleInterop: true,
          skipLibCheck: true,
          types: ['node'],
        },
        files: [path.join(dts, entry.declarations)],
      },
    },
    apiReport: {
      enabled: true,
      reportFileName: entry.report.replace(/\.api\.md$/, ''),
      reportFolder: path.join(work, 'reports-unused'),
      reportTempFolder: path.join(work, 'reports'),
    },
    docModel: { enabled: false },
    dtsRollup: { enabled: false },
    tsdocMetadata: { enabled: false },
    newlineKind: 'lf',
    messages: {
      // Our TSDoc is read by people and editors, not by a documentation generator.
      tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
      extractorMessageReporting: {
        default: { logLevel: ExtractorLogLevel.Warning, addToApiReportFile: true },
        // No release tags (@public, @beta): what an entry point exports is public.
        'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
        // Documentation is reviewed in the source, not counted here.
        'ae-undocumented': { logLevel: ExtractorLogLevel.None },
        // Sorted by owner above: another entry point's, or nobody's.
        'ae-forgotten-export': { logLevel: ExtractorLogLevel.None, addToApiReportFile: false },
      },
    },
  };
  return ExtractorConfig.prepare({
    configObject,
    configObjectFullPath: undefined,
    packageJsonFullPath: path.join(work, 'package.json'),
  });
}

function experimentalSection(names: string[]): string {
  const list = names.map((n) => `\`${n}\``).join(', ');
  return [
    '',
    '## Experimental',
    '',
    names.length ? `New and may still change in a minor release: ${list}.` : 'None.',
    '',
  ].join('\n');
}

function referencesSection(elsewhere: Set<string>, nowhere: Set<string>): string {
  const list = (names: Set<string>): string => [...names].sort().join(', ');
  const lines = ['', '## Named in these signatures, not exported here', ''];
  lines.push(
    elsewhere.size ? `Exported by another entry point: ${list(elsewhere)}.` : 'Exported by another entry point: none.',
  );
  lines.push('');
  lines.push(
    nowhere.size
      ? `Exported by no entry point (a user cannot import them): ${list(nowhere)}.`
      : 'Exported by no entry point: none.',
  );
  return lines.join('\n') + '\n';
}

function diffOf(committed: string, generated: string): string {
  if (!fs.existsSync(committed)) return `${path.relative(root, committed)} is missing`;
  try {
    execFileSync('diff', ['-u', '--label', 'committed', '--label', 'current', committed, generated], {
      encoding: 'utf8',
    });
    return '';
  } catch (err) {
    return (err as { stdout?: string }).stdout ?? String(err);
  }
}

if (require.main === module) {
  const check = process.argv.includes('--check');
  const started = Date.now();
  const { changed, problems } = apiReport({ check });
  for (const p of problems) console.error(`api: ${p}`);
  if (check) {
    for (const c of changed) console.error(`api: ${c.report} does not match the public surface:\n${c.diff}`);
    if (changed.length > 0) console.error('api: if the change is meant, run `npm run api` and commit api/');
  } else for (const c of changed) console.error(`api: wrote ${c.report}`);
  if (problems.length > 0 || (check && changed.length > 0)) process.exit(1);
  console.error(
    `api: ${check ? 'the reports in api/ match the public surface' : 'api/ is up to date'} (${Date.now() - started} ms)`,
  );
}
