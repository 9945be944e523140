package io.ductor.idempotency.autoconfigure;

import java.time.Duration;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.util.unit.DataSize;

import io.ductor.autoconfigure.internal.PropertyChecks;
import io.ductor.idempotency.DuplicatePolicy;
import io.ductor.idempotency.internal.IdempotencySettings;

/**
 * Ingress idempotency, under {@code ductor.idempotency}: one decision per (tenant, pool,
 * idempotency key), how long reservations and decisions live, what duplicates of an
 * in-flight request get, and the sweeper that releases abandoned reservations.
 *
 * @param pendingTtl How long a two-phase reservation may stay pending before the sweeper
 * releases it so that a retry runs again. Longer than the slowest two-phase operation.
 * @param completedTtl How long a completed decision is replayed to repeated requests;
 * after it the same key runs again.
 * @param retention How long settled records are kept after their last change before the
 * retention worker deletes them. Not shorter than the completed TTL, at most 36500d; to
 * keep them for ever, set ductor.retention.enabled=false.
 * @param duplicatePolicy What a request gets while another request with its key is in
 * flight: wait for its outcome (wait) or an in-flight error at once (reject).
 * @param waitTimeout The longest a duplicate waits under the wait policy before it gets
 * an in-flight error.
 * @param pollInterval How often a waiting duplicate looks again when no notification woke
 * it.
 * @param headerName The HTTP request header that carries the idempotency key.
 * @param maxRequestSize Largest request an @Idempotent endpoint accepts: its body (by
 * Content-Length when declared), the sum of its multipart parts or the bytes of its form
 * parameters. The body is read into memory for the fingerprint, so a larger request gets
 * 413 before the handler runs and nothing is stored. At most 1GB.
 * @param maxResponseSize Largest response body of an @Idempotent handler that is stored
 * for replay; never more is buffered. A larger response rolls a one-transaction decision
 * back (a 500 problem answers) and, in two-phase mode, is sent but not stored. At most
 * 1GB (the largest bytea PostgreSQL stores).
 * @param sweeper The worker that releases pending idempotency reservations past their
 * TTL.
 */
@ConfigurationProperties("ductor.idempotency")
public record DuctorIdempotencyProperties(@DefaultValue("5m") Duration pendingTtl,
		@DefaultValue("24h") Duration completedTtl, @DefaultValue("7d") Duration retention,
		@DefaultValue("wait") DuplicatePolicy duplicatePolicy, @DefaultValue("10s") Duration waitTimeout,
		@DefaultValue("1s") Duration pollInterval, @DefaultValue("Idempotency-Key") String headerName,
		@DefaultValue("1MB") DataSize maxRequestSize, @DefaultValue("1MB") DataSize maxResponseSize,
		@DefaultValue Sweeper sweeper) {

	/** An HTTP field name: an RFC 9110 token. */
	private static final Pattern HEADER_NAME = Pattern.compile("[A-Za-z0-9!#$%&'*+.^_`|~-]+");

	public DuctorIdempotencyProperties {
		PropertyChecks.requirePositive("ductor.idempotency.pending-ttl", pendingTtl);
		PropertyChecks.requirePositive("ductor.idempotency.completed-ttl", completedTtl);
		PropertyChecks.requirePositive("ductor.idempotency.retention", retention);
		PropertyChecks.requirePositive("ductor.idempotency.wait-timeout", waitTimeout);
		PropertyChecks.requirePositive("ductor.idempotency.poll-interval", pollInterval);
		if (retention.compareTo(completedTtl) < 0) {
			throw new IllegalArgumentException("ductor.idempotency.retention must not be shorter than"
					+ " ductor.idempotency.completed-ttl (" + completedTtl + ") but was " + retention);
		}
		if (duplicatePolicy == DuplicatePolicy.DEFAULT) {
			throw new IllegalArgumentException(
					"ductor.idempotency.duplicate-policy must be wait or reject but was default");
		}
		if (headerName == null || !HEADER_NAME.matcher(headerName).matches()) {
			throw new IllegalArgumentException(
					"ductor.idempotency.header-name must be an HTTP header name (letters, digits and"
							+ " !#$%&'*+-.^_`|~) but was '" + headerName + "'");
		}
		if (maxRequestSize.toBytes() < 1 || maxRequestSize.toBytes() > 1024L * 1024 * 1024) {
			throw new IllegalArgumentException(
					"ductor.idempotency.max-request-size must be between 1B and 1GB but was " + maxRequestSize);
		}
		if (maxResponseSize.toBytes() < 1 || maxResponseSize.toBytes() > 1024L * 1024 * 1024) {
			throw new IllegalArgumentException(
					"ductor.idempotency.max-response-size must be between 1B and 1GB but was " + maxResponseSize);
		}
	}

	IdempotencySettings toSettings() {
		return new IdempotencySettings(this.pendingTtl, this.completedTtl, this.duplicatePolicy, this.waitTimeout,
				this.pollInterval);
	}

	/**
	 * The sweeper: releases pending idempotency reservations whose owner never settled
	 * them (to failed_before_commit), so that a retry can run again.
	 *
	 * @param enabled Whether the sweeper runs in this instance.
	 * @param interval Pause between sweeps.
	 */
	public record Sweeper(@DefaultValue("true") boolean enabled, @DefaultValue("30s") Duration interval) {

		public Sweeper {
			PropertyChecks.requirePositive("ductor.idempotency.sweeper.interval", interval);
		}

	}

}
