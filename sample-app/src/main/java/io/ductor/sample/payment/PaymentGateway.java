package io.ductor.sample.payment;

import java.util.Optional;
import java.util.UUID;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.sample.fault.Fault;
import io.ductor.sample.fault.FaultPlan;
import io.ductor.sample.fault.SimulationProperties;

/**
 * A payment gateway simulated inside the sample, behaving as a real payment API does: a
 * charge request carries an idempotency key, and the gateway applies each key at most
 * once, answering a repeated key with the charge it made the first time. It keeps its
 * ledger in its own table, {@code sample_payment}, and logs every request it receives in
 * {@code sample_payment_request}.
 * <p>
 * Applying a key is one transaction: the charge is inserted unless the key has one, and
 * the existing charge is returned otherwise. Then the answer takes
 * {@code sample.gateway.latency} to come back. Faults ({@link FaultPlan}) make a request
 * fail before it is applied, or lose the answer after it was applied.
 */
@Component
public class PaymentGateway {

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	private final FaultPlan faults;

	PaymentGateway(DataSource dataSource, PlatformTransactionManager transactionManager,
			SimulationProperties properties) {
		this.jdbc = JdbcClient.create(dataSource);
		this.transactions = new TransactionTemplate(transactionManager);
		this.transactions.setPropagationBehavior(TransactionTemplate.PROPAGATION_REQUIRES_NEW);
		this.faults = new FaultPlan(properties.gateway());
	}

	/**
	 * @return the gateway's faults, to inject some
	 */
	public FaultPlan faults() {
		return this.faults;
	}

	/**
	 * Charge an amount, at most once per idempotency key.
	 * @param idempotencyKey the key; a repeated key returns the first charge
	 * @param orderId the order being paid
	 * @param amountCents the amount, in cents
	 * @return the charge
	 * @throws GatewayUnavailableException when the request failed before it was applied
	 * @throws GatewayTimeoutException when the answer was lost (the charge may have been
	 * applied)
	 * @throws IllegalArgumentException when the key was used for another order or amount
	 */
	public Charge charge(String idempotencyKey, String orderId, long amountCents) {
		Fault fault = this.faults.next();
		if (fault == Fault.BEFORE_APPLY) {
			log(idempotencyKey, orderId, "unavailable", false);
			throw new GatewayUnavailableException(
					"Payment gateway unavailable (503); charge '" + idempotencyKey + "' was not applied");
		}
		boolean answerLost = fault == Fault.AFTER_APPLY;
		Charge charge = this.transactions.execute((status) -> apply(idempotencyKey, orderId, amountCents, answerLost));
		this.faults.delayAnswer();
		if (answerLost) {
			throw new GatewayTimeoutException("Payment gateway did not answer in time; charge '" + idempotencyKey
					+ "' may or may not have been applied");
		}
		return charge;
	}

	/**
	 * Look up the charge made for a key, as a reconciling client would.
	 * @param idempotencyKey the key
	 * @return the charge, if the key was applied
	 */
	public Optional<Charge> find(String idempotencyKey) {
		return this.jdbc
			.sql("SELECT id, idempotency_key, order_id, amount_cents FROM sample_payment"
					+ " WHERE idempotency_key = ?")
			.param(idempotencyKey)
			.query((rs, n) -> new Charge(rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4), true))
			.optional();
	}

	/**
	 * Refund the charge made for {@code chargeKey}, at most once per idempotency key, as
	 * a real payment API does: a repeated key answers the refund it made the first time.
	 * A charge that was never made refunds nothing (and says so).
	 * @param idempotencyKey the refund's key
	 * @param chargeKey the key the charge was requested with
	 * @param orderId the order
	 * @return the amount refunded, in cents; 0 when there was no charge
	 */
	public long refund(String idempotencyKey, String chargeKey, String orderId) {
		return this.transactions.execute((status) -> {
			Optional<Charge> charge = find(chargeKey);
			this.jdbc.sql("""
					INSERT INTO sample_refund (idempotency_key, charge_key, order_id, charge_id, amount_cents)
					VALUES (?, ?, ?, ?, ?) ON CONFLICT (idempotency_key) DO NOTHING""")
				.params(idempotencyKey, chargeKey, orderId, charge.map(Charge::id).orElse(null),
						charge.map(Charge::amountCents).orElse(0L))
				.update();
			return this.jdbc.sql("SELECT amount_cents FROM sample_refund WHERE idempotency_key = ?")
				.param(idempotencyKey)
				.query(Long.class)
				.single();
		});
	}

	private Charge apply(String key, String orderId, long amountCents, boolean answerLost) {
		String id = "ch_" + UUID.randomUUID().toString().replace("-", "").substring(0, 20);
		int inserted = this.jdbc.sql("""
				INSERT INTO sample_payment (id, idempotency_key, order_id, amount_cents) VALUES (?, ?, ?, ?)
				ON CONFLICT (idempotency_key) DO NOTHING""").params(id, key, orderId, amountCents).update();
		Charge charge = find(key).orElseThrow();
		if (!charge.orderId().equals(orderId) || charge.amountCents() != amountCents) {
			throw new IllegalArgumentException("Idempotency key '" + key + "' was used for another charge");
		}
		log(key, orderId, (inserted == 1) ? "charged" : "replayed", answerLost);
		return new Charge(charge.id(), key, orderId, amountCents, inserted == 0);
	}

	private void log(String key, String orderId, String outcome, boolean answerLost) {
		this.jdbc
			.sql("INSERT INTO sample_payment_request (idempotency_key, order_id, outcome, answer_lost)"
					+ " VALUES (?, ?, ?, ?)")
			.params(key, orderId, outcome, answerLost)
			.update();
	}

}
