package io.ductor.actuate.internal;

/**
 * Hides what an application marks sensitive in the arguments of its intents before the
 * {@code ductor} endpoint shows them (the operator console sets one from
 * {@code ductor.console.hidden-fields}).
 */
@FunctionalInterface
public interface PayloadMask {

	/** Shows the arguments as stored. */
	PayloadMask NONE = (payloadJson) -> payloadJson;

	/**
	 * @param payloadJson an intent's arguments as stored (a JSON array)
	 * @return the arguments to show
	 */
	String mask(String payloadJson);

}
