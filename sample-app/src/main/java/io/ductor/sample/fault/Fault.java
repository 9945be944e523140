package io.ductor.sample.fault;

/**
 * A failure one of the sample's simulated receivers (the payment gateway, the mail server) can be
 * told to inject into a request.
 */
public enum Fault {

	/** The request succeeds. */
	NONE,

	/** The request fails before the receiver applies it: nothing happened there. */
	BEFORE_APPLY,

	/**
	 * The receiver applies the request, then the answer is lost: the caller sees an error although
	 * the charge or the mail went through. This is the window no platform can close on its own.
	 */
	AFTER_APPLY

}
