import type { Admin, Kafka } from 'kafkajs';

/** One admin connection shared by provisioning and the operator views, opened on first use. */
export class KafkajsAdminConnection {
  private admin?: Promise<Admin>;

  constructor(private readonly kafka: Kafka) {}

  get(): Promise<Admin> {
    this.admin ??= this.open();
    return this.admin;
  }

  async disconnect(): Promise<void> {
    const admin = this.admin;
    this.admin = undefined;
    if (admin) await (await admin).disconnect();
  }

  private async open(): Promise<Admin> {
    const admin = this.kafka.admin();
    try {
      await admin.connect();
      return admin;
    } catch (error) {
      // Forget the failed attempt so the next call tries again instead of replaying the error.
      this.admin = undefined;
      throw error;
    }
  }
}
