/**
 * Node-only (reads files): the worker and the CLI load the manifest; workflows never do.
 * Loads a YAML or JSON manifest and refuses it with the file, the path and the line.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import type { z } from 'zod';
import { checkConsistency, type ConsistencyReport } from '../catalog/consistency';
import { ManifestInvalid, type ManifestProblem } from '../catalog/errors';
import { Manifest } from '../catalog/manifest';

export interface LoadedManifest {
  file: string;
  manifest: Manifest;
  warnings: ManifestProblem[];
}

export function formatPath(segments: readonly PropertyKey[]): string {
  return segments
    .map((s, i) =>
      typeof s === 'number'
        ? `[${s}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(String(s))
          ? `${i ? '.' : ''}${String(s)}`
          : `[${JSON.stringify(String(s))}]`,
    )
    .join('');
}

export function parsePath(p: string): (string | number)[] {
  const out: (string | number)[] = [];
  const re = /\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\]|\.?([A-Za-z_][A-Za-z0-9_]*)/g;
  for (const m of p.matchAll(re))
    out.push(m[1] !== undefined ? Number(m[1]) : m[2] !== undefined ? JSON.parse(`"${m[2]}"`) : m[3]!);
  return out;
}

function lineOf(doc: Document | undefined, counter: LineCounter, segments: (string | number)[]): number | undefined {
  if (!doc) return undefined;
  // Walk down to the deepest node that exists: a missing key is reported where its parent is.
  for (let n = segments.length; n >= 0; n--) {
    const node = doc.getIn(segments.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    const parent = n > 0 ? doc.getIn(segments.slice(0, n - 1), true) : doc.contents;
    if (node && typeof node === 'object' && node.range) return counter.linePos(node.range[0]).line;
    if (parent && (isMap(parent) || isSeq(parent)) && parent.range) return counter.linePos(parent.range[0]).line;
  }
  return undefined;
}

function zodProblems(error: z.ZodError): { path: (string | number)[]; message: string }[] {
  const out: { path: (string | number)[]; message: string }[] = [];
  for (const issue of error.issues) {
    const p = issue.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) out.push({ path: [...p, key], message: `unknown key "${key}"` });
    } else if (
      issue.code === 'invalid_union' &&
      'errors' in issue &&
      Array.isArray(issue.errors) &&
      issue.errors.length > 0
    ) {
      // Report the branch that got furthest rather than "invalid input".
      const branches = (issue.errors as z.core.$ZodIssue[][]).map((errs) =>
        errs.map((e) => ({ ...e, path: [...p, ...e.path] })),
      );
      const best = branches.sort((a, b) => a.length - b.length)[0]!;
      for (const e of best)
        out.push({ path: e.path.filter((s): s is string | number => typeof s !== 'symbol'), message: e.message });
    } else {
      out.push({ path: p, message: issue.message });
    }
  }
  return out;
}

/** Parses and checks manifest text; `file` names it in every message. */
export function parseManifest(text: string, file: string): LoadedManifest {
  const counter = new LineCounter();
  let raw: unknown;
  let doc: Document | undefined;
  if (/\.json$/i.test(file)) {
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw new ManifestInvalid(file, [
        { path: '', kind: 'syntax', message: `not valid JSON: ${(err as Error).message}` },
      ]);
    }
  } else {
    doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: true });
    if (doc.errors.length > 0) {
      throw new ManifestInvalid(
        file,
        doc.errors.map((e) => ({
          path: '',
          kind: 'syntax',
          line: e.linePos?.[0]?.line,
          message: `not valid YAML: ${e.message.split('\n')[0]}`,
        })),
      );
    }
    raw = doc.toJS();
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ManifestInvalid(file, [
      { path: '', kind: 'shape', message: 'a manifest is a mapping with version, servers and tools' },
    ]);
  }
  const parsed = Manifest.safeParse(raw);
  if (!parsed.success) {
    throw new ManifestInvalid(
      file,
      zodProblems(parsed.error).map((p) => ({
        path: formatPath(p.path),
        line: lineOf(doc, counter, p.path),
        message: p.message,
        kind: 'shape' as const,
      })),
    );
  }
  const report: ConsistencyReport = checkConsistency(parsed.data);
  const locate = (p: ManifestProblem): ManifestProblem => ({
    ...p,
    line: lineOf(doc, counter, parsePath(p.path)),
    kind: 'rule',
  });
  if (report.errors.length > 0) throw new ManifestInvalid(file, report.errors.map(locate));
  return { file, manifest: parsed.data, warnings: report.warnings.map(locate) };
}

export function loadManifest(file: string): LoadedManifest {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new ManifestInvalid(file, [
      { path: '', message: `cannot read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` },
    ]);
  }
  return parseManifest(text, path.relative(process.cwd(), path.resolve(file)) || file);
}
