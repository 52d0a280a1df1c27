export { OutboxModule } from './outbox.module';
export type { OutboxModuleOptions } from './outbox.module';
export { OutboxRelay } from './outbox-relay.service';
export type { RelayOptions } from './relay.options';
export { RELAY_GROUP } from './outbox.constants';
