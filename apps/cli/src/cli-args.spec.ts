import { describe, expect, it } from 'vitest';
import { parseArgs } from './cli-args';
import { runCli } from './cli';
import { COMMANDS } from './commands';

const NOW = Date.UTC(2026, 10, 30, 9, 0, 0);

async function run(argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {}, { stdout: (t) => out.push(t), stderr: (t) => err.push(t) }, NOW);
  return { code, out, err };
}

describe(parseArgs.name, () => {
  it.each([
    [['frobnicate'], 'tally: unknown command "frobnicate"; run "tally help" for the list'],
    [['consumers'], 'tally consumers: missing subcommand (status, reset)'],
    [['consumers', 'stats'], 'tally consumers: unknown subcommand "stats" (status, reset)'],
    [['consumers', 'status', '--bogus'], 'tally consumers status: unknown option --bogus'],
    [['consumers', 'status', '-v'], 'tally consumers status: unknown option -v'],
    [['consumers', 'reset'], 'tally consumers reset: --to is required'],
    [['consumers', 'reset', '--to'], 'tally consumers reset: --to needs a value'],
    [
      ['consumers', 'reset', '--to', 'soon'],
      'tally consumers reset: --to: "soon" is not a time (use ISO 8601 like 2026-11-30T09:00:00Z, a date, now, or now-1h, earliest or latest)',
    ],
    [['policy', 'check'], 'tally policy check: missing FILE'],
    ...['0', '65', 'two', '1.5', '-1'].map((n): [string[], string] => [
      ['replay', '--from', 'earliest', '--to', 'latest', '--namespace', 'x', `--workers=${n}`],
      `tally replay: --workers: ${JSON.stringify(n)} is not a number of workers from 1 to 64`,
    ]),
    [['policy', 'check', 'a.yaml', 'b.yaml'], 'tally policy check: unexpected argument "b.yaml"'],
    [
      ['replay', '--from', 'yesterday', '--to', 'latest', '--namespace', 'x'],
      'tally replay: --from: "yesterday" is not a time (use ISO 8601 like 2026-11-30T09:00:00Z, a date, now, or now-1h, or earliest)',
    ],
    [
      ['replay', '--from', '2026-11-30T09:00:00', '--to', 'latest', '--namespace', 'x'],
      'tally replay: --from: "2026-11-30T09:00:00" is not a time (use ISO 8601 like 2026-11-30T09:00:00Z, a date, now, or now-1h, or earliest)',
    ],
    [
      ['replay', '--from', 'earliest', '--to', 'latest', '--namespace', 'Bad NS'],
      'tally replay: --namespace: "Bad NS" is not a valid namespace ([a-z0-9][a-z0-9_-]{0,62})',
    ],
    [['replay', '--from', 'earliest', '--to', 'latest'], 'tally replay: --namespace is required'],
    [
      ['replay', '--from', 'earliest', '--from', 'earliest', '--to', 'latest', '--namespace', 'x'],
      'tally replay: --from given twice',
    ],
    [
      ['replay', '--force=yes', '--from', 'earliest', '--to', 'latest', '--namespace', 'x'],
      'tally replay: --force takes no value',
    ],
    [
      ['projections', 'switch', 'NOPE!'],
      'tally projections switch: NAMESPACE: "NOPE!" is not a valid namespace ([a-z0-9][a-z0-9_-]{0,62})',
    ],
    [
      ['simulate', '--policies', 'p.yaml', '--from', 'now-1x', '--to', 'now'],
      'tally simulate: --from: "now-1x" is not a time (use ISO 8601 like 2026-11-30T09:00:00Z, a date, now, or now-1h)',
    ],
    [
      ['reseed', '--from', '2026-02-30'],
      'tally reseed: --from: "2026-02-30" is not a time (use ISO 8601 like 2026-11-30T09:00:00Z, a date, now, or now-1h)',
    ],
    [
      ['reconcile', '--enforcement', '--namespace', 'Bad NS'],
      'tally reconcile: --namespace: "Bad NS" is not a valid namespace ([a-z0-9][a-z0-9_-]{0,62})',
    ],
    [['reconcile', '--enforcement', '--tenant'], 'tally reconcile: --tenant needs a value'],
    [['reconcile', '--enforcement=yes'], 'tally reconcile: --enforcement takes no value'],
    [['bench', 'fast'], 'tally bench: BENCH: "fast" is not hot-path or ledger'],
    [['bench', 'hot-path', 'ledger'], 'tally bench: unexpected argument "ledger"'],
    [['bench', '--build'], 'tally bench: unknown option --build'],
  ])('%j → exit 2: %s', async (argv, message) => {
    const result = await run(argv);

    expect(result).toEqual({ code: 2, out: [], err: [message] });
  });

  it.each([
    [
      ['simulate', '--policies', 'p.yaml', '--from', 'now', '--to', 'now-1h'],
      'tally simulate: --from must be before --to',
    ],
    [
      ['replay', '--from', 'now', '--to', 'now-1h', '--namespace', 'x'],
      'tally replay: --from must be before --to',
    ],
    [
      ['consumers', 'status', '--redis-url', 'nowhere'],
      'tally consumers status: configuration: Invalid configuration (1 problem):\n  REDIS_URL: must be redis://host:port, rediss://host:port, redis+cluster://h1:p1,h2:p2 or a list h1:p1,h2:p2 (got "nowhere")',
    ],
    [
      ['reconcile', 'live', '--enforcement'],
      'tally reconcile: --enforcement compares one namespace with the counters: give it as --namespace NS',
    ],
    [
      ['reconcile', '--enforcement', '--granularity', 'hour', '--from', 'now-1h'],
      'tally reconcile: --from, --granularity: only when comparing two namespaces',
    ],
    [
      ['reconcile', 'a', 'b', '--tenant', 'acme', '--strict'],
      'tally reconcile: --tenant, --strict: only with --enforcement',
    ],
    [
      ['reconcile', '--enforcement', '--policies', '/nonexistent/policies.yaml'],
      "tally reconcile: cannot read policy file /nonexistent/policies.yaml: ENOENT: no such file or directory, open '/nonexistent/policies.yaml'",
    ],
  ])('%j → exit 2 after parsing: %s', async (argv, message) => {
    const result = await run(argv);

    expect(result).toEqual({ code: 2, out: [], err: [message] });
  });

  it('reads values with = or a space, flags, and times in every accepted form', () => {
    const sut = parseArgs(
      [
        'replay',
        '--from=2026-11-30T10:00+01:00',
        '--to',
        'now-30m',
        '--namespace',
        'rebuild-1',
        '--force',
        '--workers',
        '4',
        '--json',
      ],
      COMMANDS,
      NOW,
    );

    expect(sut).toEqual({
      ok: true,
      args: expect.objectContaining({
        positionals: {},
        options: {
          from: NOW,
          to: NOW - 1_800_000,
          namespace: 'rebuild-1',
          force: true,
          workers: 4,
          json: true,
        },
      }),
    });
  });

  it('takes positionals after the command words', () => {
    const sut = parseArgs(['reconcile', 'live', 'replay-1', '--granularity', 'hour'], COMMANDS, NOW);

    expect(sut.ok && sut.args.positionals).toEqual({ NS_A: 'live', NS_B: 'replay-1' });
    expect(sut.ok && sut.args.command.path).toEqual(['reconcile']);
  });

  it('prints help on stdout with exit 0, and on stderr with exit 2 when no command is given', async () => {
    const help = await run(['help']);
    const none = await run([]);

    expect(help.code).toBe(0);
    expect(help.out[0]).toContain(
      'tally replay --from TIME|earliest --to TIME|latest --namespace NS [--force]',
    );
    expect(none.code).toBe(2);
    expect(none.err[0]).toContain('usage: tally <command>');
  });
});
