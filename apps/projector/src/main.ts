import 'reflect-metadata';
import { runHttpApp } from '@tally/http';
import { ProjectorModule } from './projector.module';

void runHttpApp({
  name: 'projector',
  port: (c) => c.projectorPort,
  module: (c) => ProjectorModule.forRoot(c),
});
