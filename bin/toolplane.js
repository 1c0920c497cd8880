#!/usr/bin/env node
// The `toolplane` bin. From the installed package it runs the build (lib/cli.js). In a clone of the
// repository, where cli.ts sits beside this folder and tsx (a dev dependency) is installed, it runs
// the TypeScript source, so `npx toolplane` in the clone is `npm run -s toolplane --`: never a stale
// build, and nothing to build first.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const source = path.join(root, 'cli.ts');

function fromSource() {
  if (!fs.existsSync(source)) return undefined;
  try {
    require(require.resolve('tsx/cjs', { paths: [root] }));
  } catch {
    return undefined;
  }
  return require(source);
}

const cli = fromSource() ?? require(path.join(root, 'lib', 'cli.js'));
void cli.main(process.argv).then((code) => process.exit(code));
