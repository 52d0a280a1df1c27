import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './cli';
import { commandHelp } from './cli-help';
import { COMMANDS } from './commands';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  // No REDIS_URL, no broker: help and --version must need neither config nor a connection.
  const code = await runCli(argv, {}, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe(commandHelp.name, () => {
  it.each(COMMANDS.map((c) => [c.path.join(' '), c] as const))(
    'tally %s --help: usage, every option, the three exit codes',
    async (name, command) => {
      const sut = await run([...command.path, '--help']);

      expect(sut.code).toBe(0);
      expect(sut.err).toBe('');
      expect(sut.out).toBe(commandHelp(command));
      expect(sut.out.split('\n')[0]).toMatch(new RegExp(`^usage: tally ${name}( |$)`));
      expect(sut.out).toContain(command.summary);
      for (const option of [...command.options.map((o) => o.name), 'json', 'redis-url', 'brokers', 'help']) {
        expect(sut.out).toMatch(new RegExp(`^  --${option}\\b`, 'm'));
      }
      expect(sut.out).toContain(`exit codes:\n  0  success\n  1  ${command.exit1}\n  2  bad arguments`);
    },
  );

  it('prints a required option as required and a choice as its values', () => {
    const reset = COMMANDS.find((c) => c.path.join(' ') === 'consumers reset');
    const bench = COMMANDS.find((c) => c.path.join(' ') === 'bench');

    expect(reset && commandHelp(reset)).toMatch(
      /^ {2}--to earliest\|latest\|TIME +where the group resumes \(required\)$/m,
    );
    expect(bench && commandHelp(bench)).toContain('BENCH (optional) (one of ');
  });

  it('answers help before parsing: -h, a missing required option or a positional do not matter', async () => {
    const short = await run(['consumers', 'reset', '-h']);
    const withArgs = await run(['policy', 'check', 'missing.yaml', '--json', '--help']);
    const viaHelp = await run(['help', 'consumers', 'reset']);

    expect(short).toMatchObject({ code: 0, err: '' });
    expect(short.out).toMatch(/^usage: tally consumers reset --to earliest\|latest\|TIME/);
    expect(withArgs.out).toMatch(/^usage: tally policy check FILE/);
    expect(viaHelp.out).toBe(short.out);
  });

  it('a family prints each of its commands; an unknown command is a usage error (exit 2)', async () => {
    const family = await run(['projections', '--help']);
    const unknown = await run(['frobnicate', '--help']);

    expect(family.code).toBe(0);
    expect(family.out.match(/^usage: tally projections /gm)).toHaveLength(3);
    expect(unknown).toEqual({
      code: 2,
      out: '',
      err: 'tally: unknown command "frobnicate"; run "tally help" for the list',
    });
  });
});

describe('tally --version', () => {
  it("prints the repository's package.json version, exit 0", async () => {
    const pkg = JSON.parse(readFileSync(resolve(__dirname, '../../../package.json'), 'utf8')) as {
      version: string;
    };

    const sut = await run(['--version']);

    expect(sut).toEqual({ code: 0, out: pkg.version, err: '' });
  });
});

describe('the tally bin', () => {
  it('package.json names the built CLI, whose source opens with a node shebang', () => {
    const root = resolve(__dirname, '../../..');
    const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };

    expect(pkg.bin).toEqual({ tally: 'dist/apps/cli/src/main.js' });
    expect(readFileSync(resolve(root, 'apps/cli/src/main.ts'), 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });
});
