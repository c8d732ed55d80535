import type { Client, ClientWithKey, CompanyDetails } from '@logi/domain';
import { toNumber, toText } from './sql-values.js';

export const CLIENT_COLUMNS = [
  'id',
  'directory',
  'name',
  'api_key_hash',
  'company_name',
  'company_address',
  'company_vat',
  'company_bank_account',
  'company_bank_name',
  'company_country',
  'company_contact_name',
  'company_contact_phone',
  'company_contact_email',
  'company_county',
] as const;

export type ClientRow = Record<(typeof CLIENT_COLUMNS)[number], unknown>;

export function toClient(row: ClientRow): Client {
  return {
    id: toNumber(row.id, 'clients.id'),
    directory: toText(row.directory, 'clients.directory'),
    name: toText(row.name, 'clients.name'),
    company: {
      name: toText(row.company_name, 'clients.company_name'),
      address: toText(row.company_address, 'clients.company_address'),
      vat: toText(row.company_vat, 'clients.company_vat'),
      bankAccount: toText(row.company_bank_account, 'clients.company_bank_account'),
      bankName: toText(row.company_bank_name, 'clients.company_bank_name'),
      ...(row.company_country == null ? {} : { country: toText(row.company_country, 'clients.company_country') }),
      ...(row.company_contact_name == null
        ? {}
        : {
            contact: {
              name: toText(row.company_contact_name, 'clients.company_contact_name'),
              phone: toText(row.company_contact_phone ?? '', 'clients.company_contact_phone'),
              email: toText(row.company_contact_email ?? '', 'clients.company_contact_email'),
            },
          }),
      ...(row.company_county == null ? {} : { county: toText(row.company_county, 'clients.company_county') }),
    },
  };
}

export function toClientWithKey(row: ClientRow): ClientWithKey {
  return { ...toClient(row), apiKeyHash: toText(row.api_key_hash, 'clients.api_key_hash') };
}

export function companyColumns(company: CompanyDetails) {
  return {
    company_name: company.name,
    company_address: company.address,
    company_vat: company.vat,
    company_bank_account: company.bankAccount,
    company_bank_name: company.bankName,
    company_country: company.country ?? null,
    company_contact_name: company.contact?.name ?? null,
    company_contact_phone: company.contact?.phone ?? null,
    company_contact_email: company.contact?.email ?? null,
    company_county: company.county ?? null,
  };
}
