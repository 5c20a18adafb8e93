import { runServiceMain } from '@capstan/provider-kit';
import { createDashboardService } from './service.js';

await runServiceMain(createDashboardService(), process.argv.slice(2));
