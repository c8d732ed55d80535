import type { InvoiceTranslation } from './invoice-translation.js';

const PERCENTAGE = /^\d{1,3}(?:[.,]\d{1,4})?$/;

/** Formatters kept per translation, currency and time zone; a bounded few (they are immutable). */
const KEPT_PER_TRANSLATION = 32;
const kept = new WeakMap<InvoiceTranslation, Map<string, InvoiceValueFormatter>>();

/**
 * Formats an invoice's values in one locale, currency and time zone with Intl
 * (no hand-made separators: 1 450,00 zł, 1.450,00 €, €1,450.00).
 */
export class InvoiceValueFormatter {
  /**
   * The formatter of these settings, made once: its six Intl objects cost more to build than a whole
   * document takes to format (issue 26), and every PDF download builds a document, in the API and the worker.
   */
  static of(translation: InvoiceTranslation, currency: string, timeZone: string): InvoiceValueFormatter {
    let byKey = kept.get(translation);
    if (!byKey) kept.set(translation, (byKey = new Map<string, InvoiceValueFormatter>()));
    const key = `${currency}\u0000${timeZone}`;
    let formatter = byKey.get(key);
    if (!formatter) {
      formatter = new InvoiceValueFormatter(translation, currency, timeZone);
      if (byKey.size >= KEPT_PER_TRANSLATION) byKey.delete(byKey.keys().next().value!);
      byKey.set(key, formatter);
    }
    return formatter;
  }

  private readonly dateFormat: Intl.DateTimeFormat;
  private readonly moneyFormat: Intl.NumberFormat;
  private readonly decimalFormat: Intl.NumberFormat;
  private readonly quantityFormat: Intl.NumberFormat;
  private readonly percentFormat: Intl.NumberFormat;
  private readonly regionNames: Intl.DisplayNames;

  constructor(
    private readonly translation: InvoiceTranslation,
    private readonly currency: string,
    timeZone: string,
  ) {
    const locale = translation.locale;
    this.dateFormat = new Intl.DateTimeFormat(locale, { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    // Grouping always, so that a column of amounts reads alike (Polish CLDR leaves 4-digit numbers ungrouped).
    this.decimalFormat = new Intl.NumberFormat(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2, useGrouping: 'always' });
    this.moneyFormat = moneyFormat(locale, currency) ?? this.decimalFormat;
    this.quantityFormat = new Intl.NumberFormat(locale, { maximumFractionDigits: 3 });
    this.percentFormat = new Intl.NumberFormat(locale, { style: 'percent', maximumFractionDigits: 2 });
    this.regionNames = new Intl.DisplayNames(locale, { type: 'region', fallback: 'code' });
  }

  /** A day in the configured time zone, from Unix seconds. */
  date(unixSeconds: number): string {
    return this.dateFormat.format(new Date(unixSeconds * 1000));
  }

  /** An amount with its currency, for totals. */
  money(amount: number): string {
    const text = this.moneyFormat.format(withoutNegativeZero(amount));
    // A currency Intl does not accept still gets printed, after the number.
    return this.moneyFormat === this.decimalFormat ? `${text} ${this.currency}` : text;
  }

  /** An amount without the currency, for table cells (the currency is named once above the table). */
  amount(amount: number): string {
    return this.decimalFormat.format(withoutNegativeZero(amount));
  }

  quantity(quantity: number): string {
    return this.quantityFormat.format(withoutNegativeZero(quantity));
  }

  /** "23" -> "23 %" / "23%" / "%23" as the locale writes it; "np" / "zw" -> their translated names. */
  taxRate(rate: string): string {
    const code = rate.trim().toLowerCase();
    if (code === 'np' || code === 'zw') return this.translation.taxCodes[code];
    if (PERCENTAGE.test(code)) return this.percentFormat.format(Number(code.replace(',', '.')) / 100);
    return rate.trim();
  }

  /** The country's name in the document language; an unknown code is printed as the code. */
  country(code: string): string | null {
    const region = code.trim().toUpperCase();
    if (region === '') return null;
    try {
      return this.regionNames.of(region) ?? region;
    } catch {
      return region;
    }
  }
}

function moneyFormat(locale: string, currency: string): Intl.NumberFormat | null {
  try {
    return new Intl.NumberFormat(locale, { style: 'currency', currency, useGrouping: 'always' });
  } catch {
    return null;
  }
}

function withoutNegativeZero(value: number): number {
  return value === 0 ? 0 : value;
}
