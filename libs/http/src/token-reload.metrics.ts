import { Inject, Injectable, type OnModuleInit, Optional } from '@nestjs/common';
import { METRICS_REGISTRY } from '@tally/observability';
import { Counter, type Registry } from 'prom-client';
import { TOKEN_STORE } from './http.constants';
import type { TokenStore } from '@tally/auth';

/** `tally_token_reloads_total{outcome,trigger}`: a refused tokens file must show on a dashboard. */
@Injectable()
export class TokenReloadMetrics implements OnModuleInit {
  constructor(
    @Inject(TOKEN_STORE) private readonly store: TokenStore,
    @Optional() @Inject(METRICS_REGISTRY) private readonly registry?: Registry,
  ) {}

  onModuleInit(): void {
    if (!this.registry) return;
    const reloads = new Counter({
      name: 'tally_token_reloads_total',
      help: 'Tokens file reloads by outcome (applied|unchanged|rejected) and trigger (file|request)',
      labelNames: ['outcome', 'trigger'],
      registers: [this.registry],
    });
    this.store.onReload((result, trigger) => {
      const outcome = !result.ok ? 'rejected' : result.changed ? 'applied' : 'unchanged';
      reloads.inc({ outcome, trigger });
    });
  }
}
