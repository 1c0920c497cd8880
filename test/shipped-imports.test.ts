// Every package the shipped code loads at run time is one package.json declares: a package that loads only
// because npm hoisted it beside another breaks on the next release of that other package.
import { builtinModules } from 'node:module';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const root = path.resolve(__dirname, '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
};
const build = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };

function sources(entry: string): string[] {
  const at = path.join(root, entry);
  if (!statSync(at).isDirectory()) return [at];
  return readdirSync(at).flatMap((name) => (name.endsWith('.d.ts') ? [] : sources(path.join(entry, name))));
}

/** The bare specifiers a file loads at run time: type-only imports and exports are erased by the compiler. */
function runtimeSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause?.isTypeOnly === true ||
        (clause !== undefined &&
          clause.name === undefined &&
          clause.namedBindings !== undefined &&
          ts.isNamedImports(clause.namedBindings) &&
          clause.namedBindings.elements.length > 0 &&
          clause.namedBindings.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) found.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (!node.isTypeOnly) found.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword ||
        (ts.isIdentifier(node.expression) && node.expression.text === 'require')) &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      found.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter((s) => !s.startsWith('.') && !s.startsWith('toolplane'));
}

const packageOf = (specifier: string): string =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
const builtin = new Set(builtinModules);

describe('the shipped code', () => {
  it('loads at run time only packages package.json declares, each at an exact version', () => {
    const declared = { ...pkg.peerDependencies, ...pkg.dependencies };
    const undeclared: string[] = [];
    for (const file of build.include.flatMap(sources).filter((f) => f.endsWith('.ts'))) {
      for (const specifier of runtimeSpecifiers(file)) {
        const name = packageOf(specifier);
        if (specifier.startsWith('node:') || builtin.has(name)) continue;
        if (!(name in declared)) undeclared.push(`${path.relative(root, file)}: ${specifier}`);
      }
    }
    expect(undeclared).toEqual([]);
    // A Temporal package at another version than the rest would load a second copy of the SDK.
    const temporal = Object.entries(pkg.dependencies).filter(([name]) => name.startsWith('@temporalio/'));
    expect(new Set(temporal.map(([, version]) => version))).toEqual(new Set([pkg.dependencies['@temporalio/worker']]));
  });

  it('names the repository the README clones', () => {
    const repository = (
      JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { repository: { url: string } }
    ).repository.url;
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const url = repository.replace(/^git\+/, '');
    expect(readme).toContain(`git clone ${url} toolplane`);
  });
});
