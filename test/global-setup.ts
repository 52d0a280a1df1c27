/**
 * Integration suites run against a real Redis and a real Kafka broker, never mocks. Where they come from:
 * 1. REDIS_URL / KAFKA_BROKERS when given (CI with its own services, a developer's stack);
 * 2. else, on a Docker host, containers started with testcontainers (a devDependency, imported
 *    dynamically so that hosts without an engine never load it);
 * 3. else the project's no-Docker local stack (docker/local/stack.sh): redis-server + a KRaft broker.
 * Whatever this setup starts, its teardown stops; what was already running is left alone.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
    kafkaBrokers: string;
  }
}

const root = resolve(__dirname, '..');

function answers(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((done) => {
    const socket = connect({ host, port });
    const finish = (ok: boolean): void => {
      socket.destroy();
      done(ok);
    };
    socket.setTimeout(timeoutMs, () => finish(false));
    socket.once('connect', () => finish(true));
    socket.once('error', () => finish(false));
  });
}

function dockerEngineAnswers(): boolean {
  const probe = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], {
    timeout: 5000,
    encoding: 'utf8',
  });
  return probe.status === 0 && probe.stdout.trim().length > 0;
}

async function fromContainers(): Promise<{
  redisUrl: string;
  kafkaBrokers: string;
  stop: () => Promise<void>;
}> {
  // Imported only here, on a Docker host: the default no-Docker path never loads it (nor its engine
  // client). A devDependency, so this import is type-checked like any other.
  const { GenericContainer } = await import('testcontainers');
  const redis = await new GenericContainer('redis:7').withExposedPorts(6379).start();
  // The image advertises localhost:9092, so the container's 9092 is bound to the same host port.
  const kafka = await new GenericContainer('apache/kafka:3.9.1')
    .withExposedPorts({ container: 9092, host: 9092 })
    .start();
  return {
    redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    kafkaBrokers: `${kafka.getHost()}:${kafka.getMappedPort(9092)}`,
    stop: async () => {
      await Promise.all([redis.stop(), kafka.stop()]);
    },
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = { redisUrl: process.env.REDIS_URL, kafkaBrokers: process.env.KAFKA_BROKERS };
  if (given.redisUrl && given.kafkaBrokers) {
    project.provide('redisUrl', given.redisUrl);
    project.provide('kafkaBrokers', given.kafkaBrokers);
    return () => Promise.resolve();
  }
  if (dockerEngineAnswers()) {
    const containers = await fromContainers();
    project.provide('redisUrl', containers.redisUrl);
    project.provide('kafkaBrokers', containers.kafkaBrokers);
    return containers.stop;
  }
  project.provide('redisUrl', 'redis://127.0.0.1:6379');
  project.provide('kafkaBrokers', '127.0.0.1:9092');
  const running = (await answers('127.0.0.1', 6379)) && (await answers('127.0.0.1', 9092));
  if (running) return () => Promise.resolve();
  // A private state folder: `down` then stops exactly what this run started (say, the broker), never
  // a Redis that a developer's own `npm run stack:up` started earlier.
  const env = { ...process.env, STACK_DIR: resolve(root, '.local/test-stack') };
  execFileSync('bash', ['docker/local/stack.sh', 'up'], { cwd: root, stdio: 'inherit', env });
  return () => {
    execFileSync('bash', ['docker/local/stack.sh', 'down'], { cwd: root, stdio: 'inherit', env });
    return Promise.resolve();
  };
}
