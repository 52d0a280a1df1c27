import { Controller, HttpCode, Inject, type OnModuleInit, Post } from '@nestjs/common';
import { type TokensReload } from '@tally/api-contract';
import { RequireAccess, type TokenStore } from '@tally/auth';
import { shareReload } from '@tally/cluster';
import { reloadOverHttp } from './file-reload';
import { TOKEN_STORE } from './http.constants';

/**
 * `POST /v1/tokens:reload`: re-reads `TALLY_TOKENS_FILE` now (deploy scripts that cannot wait for the
 * file watch). Registered only when a tokens file is configured: without one there is nothing to reload.
 */
@Controller('v1')
@RequireAccess('admin')
export class TokensController implements OnModuleInit {
  constructor(@Inject(TOKEN_STORE) private readonly store: TokenStore) {}

  /** With several workers, a reload asked of one runs in all (the answer waits for every one). */
  onModuleInit(): void {
    shareReload('tokens file', this.store);
  }

  @Post('tokens::reload')
  @HttpCode(200)
  reload(): Promise<TokensReload> {
    return reloadOverHttp(this.store, 'tokens.invalid', 'tokens file');
  }
}
