package io.ductor.idempotency.internal;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import io.ductor.idempotency.IdempotentRequest;
import io.ductor.idempotency.Reservation;
import io.ductor.idempotency.ReserveOutcome.FingerprintMismatch;
import io.ductor.idempotency.ReserveOutcome.InFlight;
import io.ductor.idempotency.ReserveOutcome.Replay;
import io.ductor.idempotency.ReserveOutcome.Reserved;
import io.ductor.idempotency.ReserveOutcome;
import io.ductor.idempotency.StoredDecision;
import io.ductor.idempotency.StoredResponse;
import io.ductor.idempotency.internal.IdempotencyStore.Claim;
import io.ductor.idempotency.internal.IdempotencyStore.Row;
import io.ductor.json.internal.JsonCodec;

/**
 * One look at a key, without waiting: reserves it, or says who holds it and what was
 * decided.
 */
public final class KeyReserver {

	private static final int MAX_RESERVE_ATTEMPTS = 10;

	private final IdempotencyStore store;

	private final JsonCodec json;

	private final Duration pendingTtl;

	public KeyReserver(IdempotencyStore store, JsonCodec json, Duration pendingTtl) {
		this.store = store;
		this.json = json;
		this.pendingTtl = pendingTtl;
	}

	/**
	 * One look at the key. The first statement inserts a new key under its advisory lock;
	 * a lock held by another transaction means that transaction is reserving the key: in
	 * flight, unless the visible row is a valid decision (a replay, which needs no lock).
	 */
	public ReserveOutcome reserveOnce(IdempotentRequest request) {
		for (int attempt = 1; attempt <= MAX_RESERVE_ATTEMPTS; attempt++) {
			UUID token = UUID.randomUUID();
			Claim claim = this.store.reserveNew(request, token, this.pendingTtl);
			if (claim == Claim.INSERTED) {
				return new Reserved(new Reservation(request, token));
			}
			Row row = this.store.find(request).orElse(null);
			if (row == null) {
				if (claim == Claim.LOCKED) {
					return new InFlight(request);
				}
				continue; // purged between the two statements
			}
			if (row.reclaimable()) {
				if (claim == Claim.LOCKED) {
					return new InFlight(request); // being taken over right now
				}
				if (this.store.reserveOrReclaim(request, token, this.pendingTtl)) {
					return new Reserved(new Reservation(request, token));
				}
				continue; // another request took it first
			}
			if (!row.fingerprint().equals(request.fingerprint())) {
				return new FingerprintMismatch(request);
			}
			if ("pending".equals(row.status())) {
				return new InFlight(request);
			}
			return new Replay(request, decision(row));
		}
		// the key changed hands under us every time: as good as in flight
		return new InFlight(request);
	}

	@SuppressWarnings("unchecked")
	private StoredDecision decision(Row row) {
		StoredResponse response = null;
		if (row.responseStatus() != null) {
			Map<String, List<String>> headers = (row.headersJson() != null)
					? this.json.read(row.headersJson(), Map.class, "stored response headers") : Map.of();
			response = new StoredResponse(row.responseStatus(), headers, row.body());
		}
		return new StoredDecision(row.decisionId(), response, row.updatedAt(), row.expiresAt());
	}

	/**
	 * @return the outcome's name in observations and meters
	 */
	public static String tag(ReserveOutcome outcome) {
		if (outcome instanceof Reserved) {
			return "reserved";
		}
		if (outcome instanceof Replay) {
			return "replay";
		}
		if (outcome instanceof InFlight) {
			return "in_flight";
		}
		if (outcome instanceof FingerprintMismatch) {
			return "fingerprint_mismatch";
		}
		return "opted_out";
	}

}
