import 'reflect-metadata';
import { runHttpApp } from '@tally/http';
import { DecisionApiModule } from './decision-api.module';

void runHttpApp({
  name: 'decision-api',
  port: (c) => c.httpPort,
  module: (c) => DecisionApiModule.forRoot(c),
});
