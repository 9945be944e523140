package io.ductor.sample.mail;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

import io.ductor.effect.EffectNotAppliedException;
import io.ductor.sample.fault.Fault;
import io.ductor.sample.fault.FaultPlan;
import io.ductor.sample.fault.SimulationProperties;

/**
 * A mail server simulated inside the sample, like many real ones: it cannot deduplicate,
 * so a message sent twice arrives twice (its outbox is {@code sample_receipt}). A request
 * refused before sending throws {@link EffectNotAppliedException}; a message sent whose
 * confirmation is lost throws {@link MailTimeoutException}, and the caller cannot tell
 * whether it went. But the server keeps a sent log that can be asked ({@link #wasSent}),
 * which is what the receipt's reconciler does; for a message sent under
 * {@link Fault#AFTER_APPLY_LOG_DOWN} the log cannot be read, and only a person can
 * decide.
 */
@Component
public class MailServer {

	private final JdbcClient jdbc;

	private final FaultPlan faults;

	/** Messages whose entry in the sent log cannot be read. */
	private final Set<String> unreadable = ConcurrentHashMap.newKeySet();

	MailServer(DataSource dataSource, SimulationProperties properties) {
		this.jdbc = JdbcClient.create(dataSource);
		this.faults = new FaultPlan(properties.mailer());
	}

	/**
	 * @return the mail server's faults, to inject some
	 */
	public FaultPlan faults() {
		return this.faults;
	}

	/**
	 * Send a message.
	 * @param messageId the sender's id for the message (the server ignores it for
	 * deduplication)
	 * @param orderId the order the message is about
	 * @param recipient to whom
	 * @param body the text
	 * @throws EffectNotAppliedException when the server refused the message before
	 * sending it
	 * @throws MailTimeoutException when the message was sent but the confirmation was
	 * lost
	 */
	public void send(String messageId, String orderId, String recipient, String body) {
		Fault fault = this.faults.next();
		if (fault == Fault.BEFORE_APPLY) {
			throw new EffectNotAppliedException(
					"Mail server refused the connection; message '" + messageId + "' was not sent");
		}
		this.jdbc.sql("INSERT INTO sample_receipt (message_id, order_id, recipient, body) VALUES (?, ?, ?, ?)")
			.params(messageId, orderId, recipient, body)
			.update();
		this.faults.delayAnswer();
		if (fault == Fault.AFTER_APPLY_LOG_DOWN) {
			this.unreadable.add(messageId);
		}
		if (fault == Fault.AFTER_APPLY || fault == Fault.AFTER_APPLY_LOG_DOWN) {
			throw new MailTimeoutException(
					"Mail server did not confirm message '" + messageId + "'; it may or may not have been sent");
		}
	}

	/**
	 * Look a message up in the sent log.
	 * @param messageId the sender's id for the message
	 * @param orderId the order it is about
	 * @return whether the server sent it
	 * @throws IllegalStateException when the sent log cannot be read for this message
	 */
	public boolean wasSent(String messageId, String orderId) {
		if (this.unreadable.contains(messageId)) {
			throw new IllegalStateException(
					"The mail server's sent log cannot be read for message '" + messageId + "'");
		}
		return this.jdbc.sql("SELECT EXISTS (SELECT 1 FROM sample_receipt WHERE order_id = ? AND message_id = ?)")
			.params(orderId, messageId)
			.query(Boolean.class)
			.single();
	}

}
