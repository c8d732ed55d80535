/**
 * What the seeded data looks like, as SQL that MariaDB (from its SEQUENCE
 * engine) and SQLite (from a recursive CTE) both run: every column of a row
 * is a function of its sequence number, so a size's data is the same on
 * every run (dates aside: they end on the day of seeding).
 *
 * Spread: issue dates over three years ending now; types s 70 %, c 10 %,
 * p 20 %; statuses paid 65 %, semipaid 8 %, overdue or issued by payment term
 * for the rest; five branches (35/25/20/12/8 %); 5,000 customers (a third of
 * the invoices go to the 50 biggest) in PL, DE, CZ and SK with Polish,
 * German and Czech diacritics; amounts 50 to 20,050 with 23 % VAT in Poland;
 * one related order and one item per invoice, on 132 routes.
 */

export const SEED_FORMAT = 1;

export const BIG_DIRECTORY = 'bench-big';
export const SMALL_DIRECTORY = 'bench-small';
export const BIG_KEY = 'bench-key-big-0123456789';
export const SMALL_KEY = 'bench-key-small-0123456789';
/** The second, small directory of every database (tenant isolation at scale). */
export const SMALL_N = 2_000;

export const CUSTOMERS = 5_000;
/** A third of the invoices go to this many customers. */
const TOP_CUSTOMERS = 50;

const PREFIXES = ['Cargo', 'Trans', 'Spedycja', 'Logistik', 'Fracht', 'Przewozy', 'Speditions', 'Transport', 'Eurocargo', 'Auto-Trans'];
const SURNAMES = [
  'Nowak',
  'Kowalski',
  'Wiśniewski',
  'Wójcik',
  'Kowalczyk',
  'Kamiński',
  'Lewandowski',
  'Zieliński',
  'Szymański',
  'Woźniak',
  'Dąbrowski',
  'Kozłowski',
  'Jankowski',
  'Mazur',
  'Kwiatkowski',
  'Krawczyk',
  'Piotrowski',
];
const FIRST_NAMES = ['Anna', 'Jan', 'Piotr', 'Katarzyna', 'Małgorzata', 'Jürgen', 'Petra', 'Tomáš', 'Zuzana', 'Łukasz', 'Grzegorz', 'Ayşe'];
type Country = 'pl' | 'de' | 'cz' | 'sk';
const HOME_CITIES: Array<[string, Country]> = [
  ['Gdańsk', 'pl'],
  ['Łódź', 'pl'],
  ['Kraków', 'pl'],
  ['Wrocław', 'pl'],
  ['Poznań', 'pl'],
  ['Szczecin', 'pl'],
  ['Białystok', 'pl'],
  ['Toruń', 'pl'],
  ['Rzeszów', 'pl'],
  ['Katowice', 'pl'],
  ['Lublin', 'pl'],
  ['Bydgoszcz', 'pl'],
  ['Zielona Góra', 'pl'],
  ['Bielsko-Biała', 'pl'],
  ['Częstochowa', 'pl'],
  ['Gorzów Wielkopolski', 'pl'],
  ['Berlin', 'de'],
  ['Hamburg', 'de'],
  ['München', 'de'],
  ['Köln', 'de'],
  ['Düsseldorf', 'de'],
  ['Leipzig', 'de'],
  ['Nürnberg', 'de'],
  ['Dresden', 'de'],
  ['Praha', 'cz'],
  ['Brno', 'cz'],
  ['Plzeň', 'cz'],
  ['Ostrava', 'cz'],
  ['Bratislava', 'sk'],
  ['Košice', 'sk'],
];
const LEGAL: Record<Country, string[]> = { pl: ['Sp. z o.o.', 'S.A.', 'sp.j.'], de: ['GmbH', 'GmbH & Co. KG', 'AG'], cz: ['s.r.o.', 'a.s.'], sk: ['s.r.o.'] };
const STREETS: Record<Country, string> = { pl: 'ul. Przemysłowa', de: 'Industriestraße', cz: 'Průmyslová', sk: 'Priemyselná' };
const COUNTRY_NAMES: Record<Country, string> = { pl: 'Polska', de: 'Deutschland', cz: 'Česko', sk: 'Slovensko' };
const VAT_DIGITS: Record<Country, number> = { pl: 10, de: 9, cz: 8, sk: 10 };
const PHONE: Record<Country, string> = { pl: '+48', de: '+49', cz: '+420', sk: '+421' };
const TAX: Record<Country, { rate: number; label: string; currency: string }> = {
  pl: { rate: 23, label: '23', currency: 'PLN' },
  de: { rate: 0, label: '0', currency: 'EUR' },
  cz: { rate: 0, label: '0', currency: 'EUR' },
  sk: { rate: 0, label: '0', currency: 'EUR' },
};

export const ORIGINS = ['Gdańsk', 'Łódź', 'Kraków', 'Wrocław', 'Poznań', 'Szczecin', 'Białystok', 'Toruń', 'Rzeszów', 'Katowice', 'Lublin', 'Bydgoszcz'];
export const DESTINATIONS = ['Berlin', 'Hamburg', 'München', 'Köln', 'Praha', 'Brno', 'Wien', 'Rotterdam', 'Milano', 'Lyon', 'Győr'];
export const ROUTES = ORIGINS.length * DESTINATIONS.length;

export interface CustomerRow {
  i: number;
  name: string;
  vat: string;
  country: Country;
  currency: string;
  tax_rate: number;
  tax_label: string;
  address: string;
  contacts: string;
}

function ascii(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/ł/g, 'l')
    .replace(/Ł/g, 'L')
    .toLowerCase()
    .replace(/[^a-z]+/g, '');
}

/** The 5,000 customers, each a function of its number. */
export function customerRows(): CustomerRow[] {
  return Array.from({ length: CUSTOMERS }, (_, i) => {
    const [city, country] = HOME_CITIES[Math.floor(i / PREFIXES.length) % HOME_CITIES.length]!;
    const surname = SURNAMES[Math.floor(i / (PREFIXES.length * HOME_CITIES.length)) % SURNAMES.length]!;
    const legal = LEGAL[country][i % LEGAL[country].length]!;
    const digits = VAT_DIGITS[country];
    const vatNumber = String((i * 7919 + 104_729) % 10 ** digits).padStart(digits, '0');
    const first = FIRST_NAMES[i % FIRST_NAMES.length]!;
    const tax = TAX[country];
    return {
      i,
      name: `${PREFIXES[i % PREFIXES.length]} ${surname} ${city} ${legal}`,
      vat: `${country.toUpperCase()}${vatNumber}`,
      country,
      currency: tax.currency,
      tax_rate: tax.rate,
      tax_label: tax.label,
      address: `${STREETS[country]} ${1 + (i % 180)}\n${String(10_000 + ((i * 37) % 89_999))} ${city}\n${COUNTRY_NAMES[country]}`,
      contacts: JSON.stringify([
        {
          name: `${first} ${surname}`,
          phone: `${PHONE[country]} ${600 + (i % 300)} ${String(100 + ((i * 7) % 900))} ${String(100 + ((i * 13) % 900))}`,
          email: `${ascii(first)}.${ascii(surname)}@${ascii(city)}-cargo.example`,
        },
      ]),
    };
  });
}

export function routeRows(): Array<{ i: number; origin: string; destination: string }> {
  return ORIGINS.flatMap((origin, o) => DESTINATIONS.map((destination, d) => ({ i: o * DESTINATIONS.length + d, origin, destination })));
}

/** The SQL that differs between the two databases. */
export interface SeedDialect {
  readonly name: 'mysql' | 'sqlite';
  cat(...parts: string[]): string;
  /** Zero-padded to at least `width` digits (never cut). */
  lpad(expression: string, width: number): string;
  idiv(a: string, b: string): string;
  least(a: string, b: string): string;
  month(unixSeconds: string): string;
  year(unixSeconds: string): string;
  /** Amount from whole cents. */
  money(cents: string): string;
  /** A WITH prefix and the FROM item yielding `seq` from `from` to `to`. */
  numbers(from: number, to: number): { with: string; from: string };
  signed(expression: string): string;
}

export const MYSQL_SEED: SeedDialect = {
  name: 'mysql',
  cat: (...parts) => `CONCAT(${parts.join(', ')})`,
  lpad: (e, width) => `LPAD(${e}, GREATEST(${width}, LENGTH(${e})), '0')`,
  idiv: (a, b) => `((${a}) DIV (${b}))`,
  least: (a, b) => `LEAST(${a}, ${b})`,
  month: (t) => `MONTH(FROM_UNIXTIME(${t}))`,
  year: (t) => `YEAR(FROM_UNIXTIME(${t}))`,
  money: (c) => `((${c}) / 100)`,
  numbers: (from, to) => ({ with: '', from: `(SELECT CAST(seq AS SIGNED) AS seq FROM seq_${from}_to_${to}) s` }),
  signed: (e) => `CAST(${e} AS SIGNED)`,
};

export const SQLITE_SEED: SeedDialect = {
  name: 'sqlite',
  cat: (...parts) => `(${parts.map((p) => `CAST(${p} AS TEXT)`).join(' || ')})`,
  lpad: (e, width) =>
    `(CASE WHEN length(CAST(${e} AS TEXT)) >= ${width} THEN CAST(${e} AS TEXT) ELSE substr('${'0'.repeat(width)}' || CAST(${e} AS TEXT), -${width}) END)`,
  idiv: (a, b) => `((${a}) / (${b}))`,
  least: (a, b) => `min(${a}, ${b})`,
  month: (t) => `CAST(strftime('%m', ${t}, 'unixepoch') AS INTEGER)`,
  year: (t) => `CAST(strftime('%Y', ${t}, 'unixepoch') AS INTEGER)`,
  money: (c) => `((${c}) / 100.0)`,
  numbers: (from, to) => ({ with: `WITH RECURSIVE s(seq) AS (SELECT ${from} UNION ALL SELECT seq + 1 FROM s WHERE seq < ${to}) `, from: 's' }),
  signed: (e) => e,
};

/** One odd multiplier per hash stream. */
const STREAMS = [2654435761, 3266489917, 2246822519, 668265263];
/** The mixing constant of a well-known 32-bit integer hash (small enough that products stay below 2^63). */
const MIX = 73244475;
const MASK = 4294967296;

/** `a XOR b`: SQLite has no XOR operator; (a | b) - (a & b) is the same in both databases. */
function xor(a: string, b: string): string {
  return `((${a} | ${b}) - (${a} & ${b}))`;
}

/**
 * 32 pseudo-random bits per stream (h0..h3) of `seq + salt`: a multiplicative
 * hash, then two xor-shift-multiply rounds, one nesting level each (columns,
 * not copies of the expression).
 */
function hashLevels(dialect: SeedDialect, numbersFrom: string, salt: number): string {
  const streams = STREAMS.map((_, k) => k);
  const level0 = `SELECT s.seq, ${streams.map((k) => `${dialect.signed(`((s.seq + ${salt}) * ${STREAMS[k]}) % ${MASK}`)} AS x${k}`).join(', ')} FROM ${numbersFrom}`;
  const round = (from: string, input: string, output: string) =>
    `SELECT seq, ${streams.map((k) => `${dialect.signed(`(${xor(`${input}${k}`, `(${input}${k} >> 16)`)} * ${MIX}) % ${MASK}`)} AS ${output}${k}`).join(', ')} FROM (${from}) q${output}`;
  const level2 = round(round(level0, 'x', 'y'), 'y', 'z');
  return `SELECT seq, ${streams.map((k) => `${dialect.signed(xor(`z${k}`, `(z${k} >> 16)`))} AS h${k}`).join(', ')} FROM (${level2}) qh`;
}

export interface ChunkSpec {
  directory: string;
  /** Ids are offset + seq. */
  offset: number;
  from: number;
  to: number;
  /** Unix seconds the three years end at. */
  now: number;
  salt: number;
}

const DAY = 86_400;
const THREE_YEARS_DAYS = 1096;

/** The derived table `t` every statement of a chunk reads: one row per seq, the random choices made. */
function derived(dialect: SeedDialect, spec: ChunkSpec): { with: string; from: string } {
  const numbers = dialect.numbers(spec.from, spec.to);
  const level2 = [
    't1.seq AS seq',
    `${spec.offset} + t1.seq AS id`,
    `${spec.now} - (t1.h0 % ${THREE_YEARS_DAYS}) * ${DAY} - ((t1.h0 >> 11) % 43200) AS issue`,
    `CASE WHEN t1.h1 % 100 < 70 THEN 's' WHEN t1.h1 % 100 < 80 THEN 'c' ELSE 'p' END AS type`,
    `(t1.h1 >> 7) % 100 AS paybucket`,
    `CASE (t1.h1 >> 14) % 3 WHEN 0 THEN 14 WHEN 1 THEN 30 ELSE 60 END AS termdays`,
    `CASE WHEN (t1.h1 >> 16) % 100 < 35 THEN 1 WHEN (t1.h1 >> 16) % 100 < 60 THEN 2 WHEN (t1.h1 >> 16) % 100 < 80 THEN 3 WHEN (t1.h1 >> 16) % 100 < 92 THEN 4 ELSE 5 END AS branch`,
    `CASE WHEN (t1.h1 >> 23) % 100 < 33 THEN t1.h2 % ${TOP_CUSTOMERS} ELSE t1.h2 % ${CUSTOMERS} END AS cust`,
    `t1.h3 % 2000000 + 5000 AS net_cents`,
    `(t1.h3 >> 21) % ${ROUTES} AS route`,
    `t1.h2 >> 13 AS misc`,
  ].join(', ');
  return { with: numbers.with, from: `(SELECT ${level2} FROM (${hashLevels(dialect, numbers.from, spec.salt)}) t1) t` };
}

/** The four INSERT … SELECT statements of one chunk: invoices, their order and item rows, orders. */
export function chunkStatements(dialect: SeedDialect, spec: ChunkSpec): string[] {
  const d = dialect;
  const { with: withClause, from } = derived(d, spec);
  const dir = `'${spec.directory.replace(/'/g, "''")}'`;
  const taxCents = d.idiv('t.net_cents * c.tax_rate + 50', '100');
  const grossCents = `(t.net_cents + ${taxCents})`;
  const paidCents = `(CASE WHEN t.paybucket < 65 THEN ${grossCents} WHEN t.paybucket < 73 THEN ${d.idiv(grossCents, '2')} ELSE 0 END)`;
  const service = `(t.issue - (t.misc % 5) * ${DAY})`;
  const term = `(t.issue + t.termdays * ${DAY})`;
  const orderNr = d.cat(`'ORD/'`, d.year('t.issue'), `'/'`, d.lpad('t.seq', 7));
  const customers = 'JOIN bench_customers c ON c.i = t.cust';
  const routes = 'JOIN bench_routes r ON r.i = t.route';

  const invoices =
    `${withClause}INSERT INTO invoices (id, directory, nr, type, status, branch_id, issue_date, service_date, payment_term, payment_date, ` +
    'customer_name, customer_vat, customer_country, customer_address, currency, amount_net, amount_tax, amount_gross, paid, left_to_pay, correct_of_id, added_time) ' +
    `SELECT t.id, ${dir}, ${d.cat(`'FV/'`, d.month('t.issue'), `'/'`, d.year('t.issue'), `'/'`, d.lpad('t.seq', 6))}, t.type, ` +
    `CASE WHEN t.paybucket < 65 THEN 'paid' WHEN t.paybucket < 73 THEN 'semipaid' WHEN t.paybucket < 93 AND ${term} < ${spec.now} THEN 'overdue' ELSE 'issued' END, ` +
    `t.branch, t.issue, ${service}, ${term}, ` +
    `CASE WHEN t.paybucket < 73 THEN ${d.least(`t.issue + (t.misc % 60) * ${DAY}`, String(spec.now))} ELSE NULL END, ` +
    `c.name, c.vat, c.country, c.address, c.currency, ${d.money('t.net_cents')}, ${d.money(taxCents)}, ${d.money(grossCents)}, ` +
    `${d.money(paidCents)}, ${d.money(`${grossCents} - ${paidCents}`)}, ` +
    `CASE WHEN t.type = 'c' AND t.seq > 1 THEN ${spec.offset} + t.seq - 1 - (t.misc % ${d.least('t.seq - 1', '500')}) ELSE NULL END, ` +
    `t.issue + (t.misc % 7200) FROM ${from} ${customers}`;

  const invoiceOrders =
    `${withClause}INSERT INTO invoice_orders (invoice_id, position, type, nr, cmr, tasks, files, contacts) ` +
    `SELECT t.id, 0, CASE t.misc % 4 WHEN 0 THEN 'FTL' WHEN 1 THEN 'LTL' WHEN 2 THEN 'Groupage' ELSE 'Express' END, ${orderNr}, ` +
    `${d.cat(`'CMR '`, '100000 + (t.misc * 13) % 900000')}, ` +
    `${d.cat(`'[{"type":"loading","place":"'`, 'r.origin', `'","date":'`, `${service} - ${DAY}`, `'},{"type":"unloading","place":"'`, 'r.destination', `'","date":'`, service, `'}]'`)}, ` +
    `'[]', c.contacts FROM ${from} ${customers} ${routes}`;

  const invoiceItems =
    `${withClause}INSERT INTO invoice_items (invoice_id, position, name, quantity, unit, unit_price_net, tax_rate, amount_net, amount_tax, amount_gross) ` +
    `SELECT t.id, 0, ${d.cat(`'Road freight '`, 'r.origin', `'–'`, 'r.destination', `' '`, '100 + t.misc % 900')}, 1, 'pcs', ${d.money('t.net_cents')}, c.tax_label, ` +
    `${d.money('t.net_cents')}, ${d.money(taxCents)}, ${d.money(grossCents)} FROM ${from} ${customers} ${routes}`;

  const orders = `${withClause}INSERT INTO orders (id, directory, nr, ownnr) SELECT t.id, ${dir}, ${orderNr}, ${d.cat(`'PO-'`, d.year('t.issue'), `'-'`, 't.misc % 100000')} FROM ${from}`;

  return [invoices, invoiceOrders, invoiceItems, orders];
}
