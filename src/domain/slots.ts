/** A fixed number of things that may happen at once; take() says whether one more may start now. */
export class Slots {
  private taken = 0;

  constructor(readonly size: number) {}

  take(): boolean {
    if (this.taken >= this.size) return false;
    this.taken += 1;
    return true;
  }

  release(): void {
    this.taken -= 1;
  }
}
