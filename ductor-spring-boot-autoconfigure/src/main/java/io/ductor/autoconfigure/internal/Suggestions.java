package io.ductor.autoconfigure.internal;

import java.util.Collection;
import java.util.Locale;
import java.util.TreeSet;

/**
 * The closest known name to a name that names nothing, for messages of start-up failures.
 * Not an API for applications.
 */
public final class Suggestions {

	private Suggestions() {
	}

	/**
	 * Returns the known name closest to {@code name} (by edit distance, ignoring case and
	 * dashes), when one is close enough to be a typo of it.
	 * @param name the unknown name
	 * @param known the names that exist
	 * @return the closest known name, or {@code null} when none is close
	 */
	public static String closest(String name, Collection<String> known) {
		String target = uniform(name);
		String best = null;
		int bestDistance = Integer.MAX_VALUE;
		for (String candidate : new TreeSet<>(known)) {
			int distance = distance(target, uniform(candidate));
			if (distance < bestDistance) {
				best = candidate;
				bestDistance = distance;
			}
		}
		return (best != null && bestDistance <= Math.max(2, target.length() / 3)) ? best : null;
	}

	/**
	 * A sentence that points at the closest known name or, when none is close, lists the
	 * known names.
	 * @param name the unknown name
	 * @param known the names that exist
	 * @param kind what they are, in the plural ("effects")
	 * @return "did you mean 'x'?" or "known effects: a, b, c"
	 */
	public static String didYouMean(String name, Collection<String> known, String kind) {
		String closest = closest(name, known);
		if (closest != null) {
			return "did you mean '" + closest + "'?";
		}
		if (known.isEmpty()) {
			return "there are no " + kind;
		}
		TreeSet<String> sorted = new TreeSet<>(known);
		String listed = String.join(", ", sorted.stream().limit(20).toList());
		return "known " + kind + ": " + listed + ((sorted.size() > 20) ? ", …" : "");
	}

	private static String uniform(String name) {
		return name.toLowerCase(Locale.ROOT).replace("-", "").replace("_", "");
	}

	private static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int substitution = previous[j - 1] + ((a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1);
				current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

}
