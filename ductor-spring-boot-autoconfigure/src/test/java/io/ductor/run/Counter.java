package io.ductor.run;

/** A run state for tests: a number that ticks add to. */
record Counter(long value) {

	Counter plus(long delta) {
		return new Counter(this.value + delta);
	}

}
