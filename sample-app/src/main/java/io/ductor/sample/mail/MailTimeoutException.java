package io.ductor.sample.mail;

/** The mail server did not confirm a message: it may or may not have been sent. */
public class MailTimeoutException extends RuntimeException {

	MailTimeoutException(String message) {
		super(message);
	}

}
