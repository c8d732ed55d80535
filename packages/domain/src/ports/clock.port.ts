/** The current time; a port so that periods can be tested at any date. */
export interface ClockPort {
  now(): Date;
}
