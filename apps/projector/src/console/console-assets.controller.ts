import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { Controller, Get, Inject, Param, Res } from '@nestjs/common';
import { ApiError } from '@tally/errors';
import { RequireAccess } from '@tally/auth';
import type { FastifyReply } from 'fastify';
import { CONSOLE_OPTIONS, type ConsoleOptions } from './console.constants';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
/**
 * Only the console's own code runs and talks to this origin: no inline script, no other host (no CDN),
 * no framing. The token lives in sessionStorage, so what a foreign script could reach matters.
 */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "form-action 'none'; base-uri 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

interface Asset {
  readonly body: Buffer;
  readonly type: string;
}

/**
 * The console's static assets (built by `npm run build` into `dist/console`), read once at boot into
 * memory: a flat folder of a few small files, so no file path from a request ever reaches the disk.
 * Public: the assets hold no data; every number on a page comes from an API call with the token.
 */
@Controller('console')
@RequireAccess('public')
export class ConsoleAssetsController {
  private readonly assets = new Map<string, Asset>();

  constructor(@Inject(CONSOLE_OPTIONS) options: ConsoleOptions) {
    if (!existsSync(options.assetsDir)) return;
    for (const name of readdirSync(options.assetsDir)) {
      const type = TYPES[extname(name)];
      if (type !== undefined)
        this.assets.set(name, { body: readFileSync(join(options.assetsDir, name)), type });
    }
  }

  @Get()
  index(@Res({ passthrough: true }) reply: FastifyReply): Buffer {
    return this.send('index.html', reply);
  }

  @Get(':file')
  file(@Param('file') file: string, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    return this.send(file, reply);
  }

  private send(name: string, reply: FastifyReply): Buffer {
    const asset = this.assets.get(name);
    if (asset === undefined)
      throw new ApiError(
        404,
        this.assets.size === 0 ? 'console.not_built' : 'route.not_found',
        this.assets.size === 0 ? 'the console is not built (npm run build)' : 'no such console file',
      );
    void reply.headers({ ...SECURITY_HEADERS, 'content-type': asset.type });
    return asset.body;
  }
}
