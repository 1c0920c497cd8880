// `toolplane verify`: checks a produced_by reference (or a stored fact carrying one) against its
// signature and the run's history. `toolplane ledger keygen`: a key file for a worker and its verifiers.
import fs from 'node:fs';
import type { Command } from 'commander';
import { formatVerdict, verifyProducedBy } from '../ledger/verify';
import { generateLedgerKey, loadLedgerKeyFile } from '../ledger/keys';
import { CommandFailed, usageError } from './exit-codes';
import { emit, withClient, withCommonOptions, withJson, type Cli, type CommonOptions } from './shared';

interface VerifyOptions extends CommonOptions {
  publicKeys?: string;
  args?: string;
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw usageError(`${what} is not JSON: ${(err as Error).message}`);
  }
}

/** A reference as JSON text or a file; a stored fact (`{ args, produced_by }`) also gives the arguments to check. */
export function readReference(arg: string, argsJson?: string): { ref: unknown; args?: unknown } {
  const text = arg.trim().startsWith('{') ? arg : fs.existsSync(arg) ? fs.readFileSync(arg, 'utf8') : undefined;
  if (text === undefined) throw usageError(`${arg} is neither a JSON reference nor a file`);
  const value = parseJson(text, arg) as { produced_by?: unknown; args?: unknown };
  const fact = typeof value === 'object' && value !== null && 'produced_by' in value;
  const args = argsJson !== undefined ? parseJson(argsJson, '--args') : fact ? value.args : undefined;
  return { ref: fact ? value.produced_by : value, ...(args !== undefined ? { args } : {}) };
}

export function registerLedger(program: Command, cli: Cli): void {
  withCommonOptions(
    program
      .command('verify <ref>')
      .description(
        'check a produced_by reference (JSON, or a file holding it or a stored fact { args, produced_by }): key, signature, run, effect and history entry',
      )
      .option(
        '--public-keys <file>',
        'a ledger key file with the public keys to trust',
        process.env.TOOLPLANE_LEDGER_KEYS,
      )
      .option('--args <json>', "the fact's arguments, to check they are the ones signed"),
  ).action((arg: string, opts: VerifyOptions) => {
    if (!opts.publicKeys) throw usageError('verify needs --public-keys <file> (or TOOLPLANE_LEDGER_KEYS)');
    const { publicKeys } = loadLedgerKeyFile(opts.publicKeys);
    const { ref, args } = readReference(arg, opts.args);
    return withClient(opts, async (client) => {
      const verdict = await verifyProducedBy(client, ref, { publicKeys, ...(args !== undefined ? { args } : {}) });
      emit(cli, opts, verdict, () => formatVerdict(verdict).split('\n'));
      if (!verdict.valid) throw new CommandFailed(`invalid: ${verdict.reason}`);
    });
  });

  const ledger = program.command('ledger').description("the ledger's keys");
  withJson(
    ledger
      .command('keygen <keyId>')
      .description('a new Ed25519 signing key as a ledger key file (for `worker --ledger-keys`)')
      .option('--out <file>', 'write the key file here (mode 0600) instead of printing it')
      .option('--public-out <file>', 'also write a verifier file holding only the public key'),
  ).action((keyId: string, opts: { out?: string; publicOut?: string; json?: boolean }) => {
    const { privateKey, publicKeys } = generateLedgerKey(keyId);
    const keyFile = JSON.stringify({ keyId, privateKey, publicKeys }, null, 2);
    if (opts.publicOut) fs.writeFileSync(opts.publicOut, JSON.stringify({ publicKeys }, null, 2));
    if (!opts.out) return cli.out(keyFile);
    fs.writeFileSync(opts.out, keyFile, { mode: 0o600 });
    emit(cli, opts, { keyId, out: opts.out, publicOut: opts.publicOut }, () => [
      `${opts.out}: signing key ${keyId}${opts.publicOut ? `; public key in ${opts.publicOut}` : ''}`,
    ]);
  });
}
