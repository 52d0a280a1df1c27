#!/usr/bin/env node
import 'reflect-metadata';
import { runCli } from './cli';
import { withDotEnv } from './dot-env';

// kafkajs 2.2.4 schedules a timer with a negative delay on Node ≥ 22, which prints a
// TimeoutNegativeWarning on every run; it is harmless (Node clamps it to 1 ms) and only noise here.
const printWarning = process.listeners('warning');
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (warning.name !== 'TimeoutNegativeWarning') for (const listener of printWarning) listener(warning);
});

// Wiring only: the process's arguments, environment (over `.env`) and streams in, the exit code out.
let env: NodeJS.ProcessEnv;
try {
  env = withDotEnv(process.env, process.cwd());
} catch (error) {
  process.stderr.write(`tally: ${(error as Error).message}\n`);
  process.exit(2);
}
void runCli(process.argv.slice(2), env, {
  stdout: (text) => process.stdout.write(`${text}\n`),
  stderr: (text) => process.stderr.write(`${text}\n`),
  stdin: async () => {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
}).then((code) => {
  process.exitCode = code;
});
