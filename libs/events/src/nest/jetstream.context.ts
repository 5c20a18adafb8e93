import { BaseRpcContext } from '@nestjs/microservices';
import { type EventDelivery } from '../consumer/event-consumer.js';

/** What `@Ctx()` gives a handler on the JetStream transport. */
export class JetStreamContext extends BaseRpcContext<[EventDelivery]> {
  constructor(delivery: EventDelivery) {
    super([delivery]);
  }

  getDelivery(): EventDelivery {
    return this.args[0];
  }

  getSubject(): string {
    return this.args[0].subject;
  }

  getDeliveryCount(): number {
    return this.args[0].deliveryCount;
  }
}
