import type { Knex } from 'knex';
import type { Client, ClientRepositoryPort, ClientWithKey, CompanyDetails } from '@logi/domain';
import { CLIENT_COLUMNS, companyColumns, toClient, toClientWithKey, type ClientRow } from './mappers/client-row.mapper.js';

const unixNow = () => Math.floor(Date.now() / 1000);

export class KnexClientRepository implements ClientRepositoryPort {
  constructor(private readonly knex: Knex) {}

  async findByDirectory(directory: string): Promise<ClientWithKey | null> {
    // The column is utf8mb4_bin on MariaDB, so this is exact and case-sensitive in both databases.
    const row = (await this.knex('clients').select(CLIENT_COLUMNS).where({ directory }).first()) as ClientRow | undefined;
    return row ? toClientWithKey(row) : null;
  }

  async upsert(client: { directory: string; name: string; company: CompanyDetails; apiKeyHash: string }): Promise<Client> {
    const now = unixNow();
    const values = { name: client.name, api_key_hash: client.apiKeyHash, ...companyColumns(client.company), updated_at: now };
    await this.knex('clients')
      .insert({ directory: client.directory, ...values, created_at: now })
      .onConflict('directory')
      .merge(Object.keys(values));
    const stored = await this.findByDirectory(client.directory);
    if (!stored) throw new Error(`Client ${client.directory} was not stored`);
    return toClientFromKeyed(stored);
  }

  async list(): Promise<Client[]> {
    const rows = (await this.knex('clients').select(CLIENT_COLUMNS).orderBy('directory')) as ClientRow[];
    return rows.map(toClient);
  }

  async updateKeyHash(directory: string, apiKeyHash: string): Promise<boolean> {
    const changed = await this.knex('clients').where({ directory }).update({ api_key_hash: apiKeyHash, updated_at: unixNow() });
    return changed > 0;
  }
}

/** Drops the key hash, which only authentication may see. */
function toClientFromKeyed(client: ClientWithKey): Client {
  return { id: client.id, directory: client.directory, name: client.name, company: client.company };
}
