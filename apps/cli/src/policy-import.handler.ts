import { readFile, writeFile } from 'node:fs/promises';
import { importEnvoyConfig, OpsError, type EnvoyImportNote } from '@tally/ops';
import type { ParsedArgs } from './cli-args';
import type { CliContext, CommandOutcome } from './cli-context';

const lines = (label: string, notes: readonly EnvoyImportNote[]) =>
  notes.map((n) => `${label}: ${n.path} ${n.message}`);

/**
 * `tally policy import-envoy PATH [--out FILE]`: the policy file alone on stdout (or in FILE), every
 * report (errors, what is not mapped, the summary) on stderr, so a pipe into a file stays a valid
 * policy file or stays empty. Exit 1 only when the
 * input is invalid or nothing of it could be mapped: a partial conversion is reported, not refused.
 */
export async function policyImportEnvoy(args: ParsedArgs, ctx: CliContext): Promise<CommandOutcome> {
  const path = String(args.positionals.PATH);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new OpsError(`cannot read ${path}: ${(error as Error).message}`);
  }
  const result = importEnvoyConfig(text);
  if (!result.ok) {
    const n = result.errors.length;
    ctx.io.stderr(`${path}: invalid envoyproxy/ratelimit configuration, ${n} error${n === 1 ? '' : 's'}`);
    for (const e of result.errors) ctx.io.stderr(`  ${e.path}: ${e.message}`);
    return { exitCode: 1, json: { file: path, ...result }, text: '' };
  }
  for (const line of [...lines('not mapped', result.unmapped), ...lines('note', result.notes)])
    ctx.io.stderr(line);
  const nothing = result.policies.length === 0 && result.unmapped.length > 0;
  const summary = `${path}: ${result.policies.length} policies, ${result.unmapped.length} not mapped`;
  if (nothing) {
    ctx.io.stderr(`${summary}: nothing could be mapped`);
    return { exitCode: 1, json: { file: path, ...result }, text: '' };
  }
  const out = args.options.out;
  if (typeof out === 'string') {
    await writeFile(out, result.yaml);
    return { exitCode: 0, json: { file: path, out, ...result }, text: `${summary}; written to ${out}` };
  }
  ctx.io.stderr(summary);
  return { exitCode: 0, json: { file: path, ...result }, text: result.yaml.trimEnd() };
}
