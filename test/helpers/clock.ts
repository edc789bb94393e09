/**
 * A clock the test moves by hand (ServerConfig.clock), so that time limits, expiry and due
 * times are tested without waiting. Starts at the current time, on a whole second.
 */
export class TestClock {
  ms = Math.floor(Date.now() / 1000) * 1000;
  /** The clock function to give the server (milliseconds). */
  readonly now = (): number => this.ms;

  /** UNIX seconds. */
  get seconds(): number {
    return Math.floor(this.ms / 1000);
  }

  advance(seconds: number): void {
    this.ms += seconds * 1000;
  }
}
