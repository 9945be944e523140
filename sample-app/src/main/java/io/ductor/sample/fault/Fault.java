package io.ductor.sample.fault;

/**
 * A failure one of the sample's simulated receivers (the payment gateway, the mail
 * server) can be told to inject into a request.
 */
public enum Fault {

	/** The request succeeds. */
	NONE,

	/** The request fails before the receiver applies it: nothing happened there. */
	BEFORE_APPLY,

	/**
	 * The receiver applies the request, then the answer is lost: the caller sees an error
	 * although the charge or the mail went through. This is the window no platform can
	 * close on its own.
	 */
	AFTER_APPLY,

	/**
	 * As {@link #AFTER_APPLY}, and the receiver's own record of what it applied (the mail
	 * server's sent log) cannot be read for that request either: nobody can tell whether
	 * it went through, so a person decides. Only the mail server has such a log.
	 */
	AFTER_APPLY_LOG_DOWN

}
