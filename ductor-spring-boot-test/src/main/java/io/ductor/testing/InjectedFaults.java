package io.ductor.testing;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;

import io.ductor.effect.internal.DispatchFaults;

/** The faults a test queued, per effect, each consumed by one attempt. */
final class InjectedFaults implements DispatchFaults {

	private final Map<String, Deque<Throwable>> faults = new HashMap<>();

	@Override
	public synchronized Throwable faultFor(String effectName, String key, int attempt) {
		Deque<Throwable> queued = this.faults.get(effectName);
		return (queued != null) ? queued.pollFirst() : null;
	}

	synchronized void add(String effectName, int attempts, Throwable fault) {
		Deque<Throwable> queued = this.faults.computeIfAbsent(effectName, (name) -> new ArrayDeque<>());
		for (int i = 0; i < attempts; i++) {
			queued.addLast(fault);
		}
	}

	synchronized void clear() {
		this.faults.clear();
	}

}
