import type { Knex } from 'knex';
import type { Client, ClientRepositoryPort, CompanyDetails } from '@logi/domain';
import { CLIENT_COLUMNS, companyColumns, toClient, type ClientRow } from './mappers/client-row.mapper.js';

const unixNow = () => Math.floor(Date.now() / 1000);

export class KnexClientRepository implements ClientRepositoryPort {
  constructor(private readonly knex: Knex) {}

  async findByDirectory(directory: string): Promise<Client | null> {
    // The column is utf8mb4_bin on MariaDB, so this is exact and case-sensitive in both databases.
    const row = (await this.knex('clients').select(CLIENT_COLUMNS).where({ directory }).first()) as ClientRow | undefined;
    return row ? toClient(row) : null;
  }

  async upsert(client: { directory: string; name: string; company: CompanyDetails }): Promise<Client> {
    const now = unixNow();
    const values = { name: client.name, ...companyColumns(client.company), updated_at: now };
    await this.knex('clients')
      // Keys live in api_keys (migration 017); the old column is kept empty for new clients.
      .insert({ directory: client.directory, ...values, api_key_hash: '', created_at: now })
      .onConflict('directory')
      .merge(Object.keys(values));
    const stored = await this.findByDirectory(client.directory);
    if (!stored) throw new Error(`Client ${client.directory} was not stored`);
    return stored;
  }

  async list(): Promise<Client[]> {
    const rows = (await this.knex('clients').select(CLIENT_COLUMNS).orderBy('directory')) as ClientRow[];
    return rows.map(toClient);
  }
}
