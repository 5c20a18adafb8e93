import { jetstreamManager } from '@nats-io/jetstream';
import { connect as connectNats } from '@nats-io/transport-node';

/** True once a NATS server answers at `url` with JetStream enabled. */
export async function connect(url: string): Promise<boolean> {
  const nc = await connectNats({ servers: url, reconnect: false, timeout: 1000 });
  try {
    await jetstreamManager(nc, { timeout: 1000 });
    return true;
  } finally {
    await nc.close();
  }
}
