import { runServiceMain } from '@capstan/provider-kit';
import { controlPlaneProviderService } from './control-plane-service.js';

await runServiceMain(controlPlaneProviderService);
