// Node-only: the in-process tool modules `toolplane worker --tools` (and `manifest schemas`) load.
import fs from 'node:fs';
import path from 'node:path';
import { ToolplaneError } from '../catalog/errors';
import { ErrorCode } from '../catalog/error-codes';
import type { Tool } from '../activities/tool';

/** The file a module path names, as Node finds it: as given, else with an extension or as a folder's index. */
function moduleFile(file: string): string {
  if (fs.existsSync(file) && fs.statSync(file).isFile()) return file;
  for (const ending of ['.js', '.cjs', '.mjs', '.ts', '.mts', '.cts', '/index.js', '/index.ts'])
    if (fs.existsSync(file + ending)) return file + ending;
  return file; // import() says what is missing
}

/**
 * Loads a tool module. JavaScript is imported as it is; TypeScript that Node cannot import through tsx,
 * found beside the module, in the working directory or beside toolplane (a project's own
 * `npm install --save-dev tsx`), used for this module alone (nothing is registered for the rest of the process).
 */
async function loadModule(m: string): Promise<Record<string, unknown>> {
  const file = moduleFile(path.resolve(m));
  try {
    return (await import(file)) as Record<string, unknown>;
  } catch (err) {
    // Node imports no TypeScript of its own (where a loader is registered already, the import above took it).
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !/\.[cm]?tsx?$/.test(file)) throw err;
  }
  let tsx: string;
  try {
    tsx = require.resolve('tsx/cjs/api', { paths: [path.dirname(file), process.cwd(), __dirname] });
  } catch {
    throw new ToolplaneError(
      ErrorCode.UsageError,
      `${m} is TypeScript, which toolplane loads through tsx, and tsx is not installed here: ` +
        '`npm install --save-dev tsx`, or give the compiled JavaScript',
    );
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const api = require(tsx) as { require(id: string, fromFile: string): unknown };
  return api.require(file, __filename) as Record<string, unknown>;
}

/**
 * Where a module keeps its tools: `createTools()`, a default export or `tools`, the first that is a
 * function or a list, else the tools it exports by name; in a CommonJS module (compiled TypeScript)
 * imported as ES, `module.exports` is the default export and the names are looked up in it too.
 */
function toolsExport(mod: Record<string, unknown>): unknown {
  const names = (m: Record<string, unknown>) => [m.createTools, m.default, m.tools];
  const inner = mod.default;
  const commonJs = inner !== null && typeof inner === 'object' && !Array.isArray(inner);
  const named = [...names(mod), ...(commonJs ? names(inner as Record<string, unknown>) : [])].find(
    (c) => typeof c === 'function' || Array.isArray(c),
  );
  if (named !== undefined) return named;
  // Else every tool it exports by name (`export const saveNote = defineTool(...)`).
  const exported = Object.values(commonJs ? { ...(inner as Record<string, unknown>), ...mod } : mod);
  const found = [...new Set(exported.filter(isTool))];
  return found.length > 0 ? found : undefined;
}

/** A tool as `defineTool` makes it: its declaration and its handler. */
function isTool(value: unknown): value is Tool {
  const t = value as Partial<Record<'def' | 'call', unknown>> | null;
  return typeof t === 'object' && t !== null && typeof t.def === 'function' && typeof t.call === 'function';
}

/** A tools module exports `createTools()`, a default export (array or factory), or `tools`. */
export async function loadToolModules(modules: string[]): Promise<Tool[]> {
  const tools: Tool[] = [];
  for (const m of modules) {
    const source = toolsExport(await loadModule(m));
    const loaded: unknown = typeof source === 'function' ? await (source as () => Tool[] | Promise<Tool[]>)() : source;
    if (!Array.isArray(loaded))
      throw new ToolplaneError(
        ErrorCode.UsageError,
        `${m} exports no tools (expected createTools(), a default export, \`tools\` or tools exported by name)`,
      );
    tools.push(...(loaded as Tool[]));
  }
  return tools;
}
