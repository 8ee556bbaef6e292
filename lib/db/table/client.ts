import { createDocumentClient } from '../../aws/clients.ts';
import { config } from '../../config.ts';

/** Module-scope client and table name, created once per cold start and reused while warm. */
export const db = createDocumentClient();
export const tableName = config.tableName;
