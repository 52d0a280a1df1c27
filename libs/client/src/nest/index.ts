// `@tally/client/nest`: the Nest layer on the SDK core (`TallyModule`, `TallyGuard`, `@Quota`).
// A separate entry so that `@tally/client` alone never loads `@nestjs/*` (optional peer dependencies).
// Does NOT own: the client, its types and errors (`@tally/client`); HTTP adapters (tested on Fastify).
export { TallyModule, type TallyModuleOptions, type TallyModuleAsyncOptions } from './tally.module';
export { TallyGuard } from './tally.guard';
export { Quota, type QuotaOptions } from './quota.decorator';
