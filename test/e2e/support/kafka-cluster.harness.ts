/**
 * A private three-broker cluster for fault tests: docker/local/stack.sh run twice in one temp folder,
 * `TALLY_STACK=cluster STACK_SERVICES=kafka` (three KRaft nodes, broker and controller each) and the
 * single Redis beside it, all on free ports. Nodes are killed and restarted by the pids stack.sh
 * recorded; the shared stack of the other engineers is never touched.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { eventually, freePort } from '@tally/testing';
import { type Admin, ConfigResourceTypes, Kafka, logLevel } from 'kafkajs';
import { alive } from './ledger-stack.harness';

const run = promisify(execFile);
const ROOT = resolve(__dirname, '../../..');

/** One partition as the cluster's metadata shows it. */
export interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** Node id of the leader; -1 while there is none. */
  readonly leader: number;
  readonly isr: readonly number[];
}

export class PrivateKafkaCluster {
  private admin?: Promise<Admin>;

  private constructor(
    readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
    readonly redisUrl: string,
    /** `host:port` of node 1, 2, 3 (KRaft node ids are 1-based, in this order). */
    readonly brokers: readonly string[],
  ) {}

  static async up(): Promise<PrivateKafkaCluster> {
    const dir = await mkdtemp(join(tmpdir(), 'tally-kafka-cluster-'));
    const ports: number[] = [];
    for (let i = 0; i < 7; i++) ports.push(await freePort());
    const [redisPort, b1, b2, b3, c1, c2, c3] = ports as [number, ...number[]];
    const env = {
      ...process.env,
      STACK_DIR: dir,
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_PORT: String(redisPort),
      KAFKA_PORTS: [b1, b2, b3].join(','),
      KAFKA_CONTROLLER_PORTS: [c1, c2, c3].join(','),
    };
    const brokers = [b1, b2, b3].map((p) => `127.0.0.1:${p}`);
    const cluster = new PrivateKafkaCluster(dir, env, env.REDIS_URL, brokers);
    try {
      await cluster.script('redis', 'up');
      await cluster.script('kafka', 'up');
    } catch (error) {
      await cluster.down(); // whatever did start is stopped by its recorded pid
      throw error;
    }
    return cluster;
  }

  async pidOf(node: number): Promise<number> {
    return Number((await readFile(join(this.dir, `kafka-${node}.pid`), 'utf8')).trim());
  }

  /** SIGKILL to one node by its recorded pid; resolves once the process is gone. */
  async kill(node: number): Promise<void> {
    const pid = await this.pidOf(node);
    process.kill(pid, 'SIGKILL');
    await eventually(
      () => alive(pid),
      (running) => !running,
      { timeoutMs: 30_000, intervalMs: 20, what: `node ${node} (pid ${pid}) to die` },
    );
  }

  /** `stack.sh up`: starts the nodes that are not running and waits until they serve. */
  async startMissing(): Promise<void> {
    await this.script('kafka', 'up');
  }

  /** Leader and in-sync replicas of every partition of `topics`, from a live broker. */
  async partitions(topics: readonly string[]): Promise<PartitionState[]> {
    const admin = await (this.admin ??= this.connect());
    const { topics: found } = await admin.fetchTopicMetadata({ topics: [...topics] });
    return found.flatMap((t) =>
      t.partitions.map((p) => ({ topic: t.name, partition: p.partitionId, leader: p.leader, isr: p.isr })),
    );
  }

  /** A topic's own configs (what the broker stores for it, not the broker defaults). */
  async topicConfig(topic: string, name: string): Promise<string | undefined> {
    const admin = await (this.admin ??= this.connect());
    const { resources } = await admin.describeConfigs({
      resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [name] }],
      includeSynonyms: false,
    });
    return resources[0]?.configEntries.find((e) => e.configName === name)?.configValue;
  }

  async down(): Promise<void> {
    await (await this.admin?.catch(() => undefined))?.disconnect().catch(() => undefined);
    await this.script('kafka', 'down').catch(() => undefined);
    await this.script('redis', 'down').catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async connect(): Promise<Admin> {
    const kafka = new Kafka({
      clientId: 'kafka-cluster-harness',
      brokers: [...this.brokers],
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 100 },
    });
    const admin = kafka.admin();
    await admin.connect();
    return admin;
  }

  private async script(services: 'redis' | 'kafka', command: 'up' | 'down'): Promise<void> {
    const stack = services === 'redis' ? 'single' : 'cluster';
    await run('bash', [join(ROOT, 'docker/local/stack.sh'), command], {
      cwd: ROOT,
      env: { ...this.env, TALLY_STACK: stack, STACK_SERVICES: services },
    });
  }
}
