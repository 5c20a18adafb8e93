import { runServiceMain } from '@capstan/provider-kit';
import { bootstrapProviderService } from './bootstrap-service.js';

await runServiceMain(bootstrapProviderService);
