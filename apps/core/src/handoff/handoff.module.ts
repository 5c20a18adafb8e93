import { Module } from '@nestjs/common';
import { HandoffListener } from './handoff.listener.js';

/** Nest module of the core's hand-off consumer (the service context comes from provider-kit's global module). */
@Module({ controllers: [HandoffListener] })
export class HandoffModule {}
