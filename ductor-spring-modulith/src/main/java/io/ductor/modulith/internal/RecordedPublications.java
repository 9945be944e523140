package io.ductor.modulith.internal;

import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The publications the registry recorded on this thread, so that the listener adapters of
 * those publications stand down: Modulith's multicaster stores the publications of an
 * event first and then hands the event to every listener, and a listener whose
 * publication Ductor recorded is run by Ductor's drainer after the commit, not by a
 * synchronization of the publishing transaction. Marks are kept per event instance (a
 * listener may publish another event while the first is being multicast); a mark is
 * consumed by the listener it names, and whatever is left when the transaction completes
 * is forgotten.
 */
final class RecordedPublications {

	private static final ThreadLocal<Map<Object, Set<String>>> CURRENT = new ThreadLocal<>();

	private RecordedPublications() {
	}

	/**
	 * Marks a recorded publication. Call within an active transaction synchronization.
	 * @param event the event as stored (the payload)
	 * @param listenerId the listener whose publication was recorded
	 */
	static void mark(Object event, String listenerId) {
		Map<Object, Set<String>> marks = CURRENT.get();
		if (marks == null) {
			marks = new IdentityHashMap<>();
			CURRENT.set(marks);
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {
				@Override
				public void afterCompletion(int status) {
					CURRENT.remove();
				}
			});
		}
		marks.computeIfAbsent(event, (key) -> new HashSet<>()).add(listenerId);
	}

	/**
	 * @param event the event as stored
	 * @param listenerId a listener
	 * @return whether its publication of this very event was recorded (the mark is
	 * consumed)
	 */
	static boolean consume(Object event, String listenerId) {
		Map<Object, Set<String>> marks = CURRENT.get();
		if (marks == null) {
			return false;
		}
		Set<String> listeners = marks.get(event);
		if (listeners == null || !listeners.remove(listenerId)) {
			return false;
		}
		if (listeners.isEmpty()) {
			marks.remove(event);
		}
		return true;
	}

}
