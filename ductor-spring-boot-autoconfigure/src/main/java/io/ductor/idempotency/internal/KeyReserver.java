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
import io.ductor.idempotency.internal.IdempotencyStore.Found;
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

	private final LockKeys lockKeys;

	public KeyReserver(IdempotencyStore store, JsonCodec json, Duration pendingTtl, LockKeys lockKeys) {
		this.store = store;
		this.json = json;
		this.pendingTtl = pendingTtl;
		this.lockKeys = lockKeys;
	}

	/**
	 * One look at the key. A key with a row is answered from it without any lock (a
	 * replay, a reused key, a pending reservation in flight), or taken over when it is
	 * reclaimable; a key without one is inserted under its advisory lock. A lock held by
	 * another transaction means that transaction is reserving this key, or another key
	 * whose lock collides with this one's: in flight, until the last look, which tells
	 * the two apart (see {@link IdempotencyStore#probe}), so that a collision never
	 * answers in flight.
	 * @param request the key
	 * @param last whether this is the caller's last look before it answers in flight (at
	 * once under {@code REJECT}, at the wait timeout under {@code WAIT}); false when this
	 * instance holds the key itself, which needs no probe
	 */
	public ReserveOutcome reserveOnce(IdempotentRequest request, boolean last) {
		long lockKey = this.lockKeys.lockKey(request);
		for (int attempt = 1; attempt <= MAX_RESERVE_ATTEMPTS; attempt++) {
			UUID token = UUID.randomUUID();
			Found found = this.store.reserveNew(request, token, this.pendingTtl, lockKey);
			Claim claim = found.claim();
			Row row = found.row();
			if (claim == Claim.TAKEN && row == null) {
				// inserted by another transaction after this look began
				row = this.store.find(request).orElse(null);
				if (row == null) {
					continue; // and purged since
				}
			}
			if (row != null && row.reclaimable()) {
				claim = this.store.reclaim(request, token, this.pendingTtl, lockKey);
				if (claim == Claim.TAKEN) {
					continue; // another request took it first
				}
			}
			if (claim == Claim.LOCKED && last) {
				claim = this.store.probe(request, token, this.pendingTtl);
				if (claim == Claim.TAKEN) {
					continue; // settled meanwhile: look at it again
				}
			}
			if (claim == Claim.INSERTED) {
				return new Reserved(new Reservation(request, token));
			}
			if (claim == Claim.LOCKED) {
				return new InFlight(request);
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
