import { type DynamicModule, Global, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD } from '@nestjs/core';
import { BearerAuthGuard } from './bearer-auth.guard';
import { HTTP_OPTIONS } from './http.constants';
import { type HttpOptions } from './http.options';
import { ProblemFilter } from './problem.filter';

/** Auth and the error contract, shared by the decision API and the projector's query API. */
@Global()
@Module({})
export class HttpModule {
  static forRoot(options: HttpOptions): DynamicModule {
    return {
      module: HttpModule,
      providers: [
        { provide: HTTP_OPTIONS, useValue: options },
        { provide: APP_GUARD, useClass: BearerAuthGuard },
        { provide: APP_FILTER, useClass: ProblemFilter },
      ],
      exports: [HTTP_OPTIONS],
    };
  }
}
