import 'reflect-metadata';
import { runCli } from './cli';

// kafkajs 2.2.4 schedules a timer with a negative delay on Node ≥ 22, which prints a
// TimeoutNegativeWarning on every run; it is harmless (Node clamps it to 1 ms) and only noise here.
const printWarning = process.listeners('warning');
process.removeAllListeners('warning');
process.on('warning', (warning) => {
  if (warning.name !== 'TimeoutNegativeWarning') for (const listener of printWarning) listener(warning);
});

// Wiring only: the process's arguments, environment and streams in, the exit code out.
void runCli(process.argv.slice(2), process.env, {
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
