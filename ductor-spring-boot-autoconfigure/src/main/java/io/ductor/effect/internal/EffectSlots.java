package io.ductor.effect.internal;

import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import io.ductor.effect.EffectConcurrency;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;

/**
 * The concurrency limits of effects, held across every instance by the slot rows of
 * {@code eec_effect_slot}: rows 1..N per effect limited to N. A claim of a limited
 * effect's intents runs in a transaction of its own:
 * <ol>
 * <li>it locks the effect's slot rows that no other claim holds
 * ({@code FOR UPDATE SKIP LOCKED}): two claims never take the same slot, and a claim
 * never waits for another;</li>
 * <li>in a new statement, so with a snapshot taken after those locks were granted (every
 * claim that held one of them has committed), it keeps the slots whose holder is no
 * longer in flight, under a live lease, with the attempt it took the slot for; the row of
 * a holder whose lease expired stays locked until the claim commits, so that the
 * heartbeat, which extends only live leases with the row locked, cannot revive it;</li>
 * <li>it claims at most that many of the effect's due intents and writes each one's id
 * and attempt into one of the free slots.</li>
 * </ol>
 * Nothing releases a slot explicitly: whatever ends its holder's attempt (the fenced
 * completion, a hand-back, the reconciler's redrive) or the expiry of the holder's lease
 * frees it, so a crashed instance never keeps one; an expired lease is never extended
 * again ({@link LeaseHeartbeat}), so a slot freed by expiry never comes back. An attempt
 * in flight under a live lease always holds its slot: at most N attempts of the effect
 * are in flight under a live lease at any moment, and a call that outlives its lost lease
 * is the only way a receiver sees more.
 */
public final class EffectSlots {

	/** The effect's slots that no other claim holds, locked until this claim commits. */
	private static final String LOCK_SQL = """
			SELECT slot FROM eec_effect_slot WHERE effect_name = ? AND slot <= ?
			ORDER BY slot FOR UPDATE SKIP LOCKED""";

	/**
	 * Of the slots this claim locked, those whose holder's attempt is over, or whose
	 * holder's lease expired. The row of a holder whose lease expired is locked
	 * ({@code FOR SHARE}) until this claim commits, and skipped when another transaction
	 * holds it: the heartbeat extends a lease only with that row locked and only while
	 * the lease is live, so either it extended the lease first (and the lock, waited for
	 * or re-read, shows the live lease: the slot stays taken), or it finds the lease
	 * expired after this claim gave the slot away. A slot freed by expiry never comes
	 * back to its old holder. Each holder is found by its primary key (joined instead, a
	 * generic plan read every expired lease of the table).
	 */
	public static final String FREE_SQL = """
			WITH expired AS (
			    SELECT s.slot FROM eec_effect_slot s CROSS JOIN LATERAL (
			        SELECT h.id FROM eec_effect_intent h
			        WHERE h.id = s.intent_id AND h.status = 'in_flight' AND h.attempts = s.attempt
			          AND h.lease_expires_at <= ductor_now()
			        FOR SHARE SKIP LOCKED) h
			    WHERE s.effect_name = ? AND s.slot = ANY (?))
			SELECT s.slot FROM eec_effect_slot s
			WHERE s.effect_name = ? AND s.slot = ANY (?)
			  AND (s.intent_id IS NULL OR NOT EXISTS (
			      SELECT 1 FROM eec_effect_intent h
			      WHERE h.id = s.intent_id AND h.status = 'in_flight' AND h.attempts = s.attempt))
			UNION
			SELECT slot FROM expired
			ORDER BY 1""";

	private static final String TAKE_SQL = """
			UPDATE eec_effect_slot s SET intent_id = v.id, attempt = v.attempt, updated_at = ductor_now()
			FROM unnest(?::int[], ?::bigint[], ?::int[]) AS v(slot, id, attempt)
			WHERE s.effect_name = ? AND s.slot = v.slot""";

	/**
	 * The slots in use per limited effect: held by an attempt in flight under a live
	 * lease.
	 */
	/**
	 * The condition on a slot {@code s} and an intent {@code h} that makes {@code h} the
	 * slot's holder: the attempt the slot was taken for, in flight under a live lease.
	 */
	public static final String LIVE_HOLDER = "h.id = s.intent_id AND h.status = 'in_flight' AND h.attempts = s.attempt"
			+ " AND h.lease_expires_at > ductor_now()";

	private static final String IN_USE_SQL = """
			SELECT s.effect_name, count(*) AS used FROM eec_effect_slot s
			JOIN eec_effect_intent h ON %s
			WHERE s.effect_name = ANY (?) GROUP BY s.effect_name""".formatted(LIVE_HOLDER);

	private final JdbcTemplate template;

	private final JdbcClient jdbc;

	private final TransactionTemplate transactions;

	private final Supplier<Map<String, Integer>> source;

	private volatile Map<String, Integer> limits;

	private volatile boolean ensured;

	public EffectSlots(DataSource dataSource, PlatformTransactionManager transactionManager,
			Supplier<Map<String, Integer>> source) {
		this.template = new JdbcTemplate(dataSource);
		this.jdbc = JdbcClient.create(this.template);
		this.transactions = new TransactionTemplate(transactionManager);
		this.source = source;
	}

	/**
	 * The limits, read once from the effects (after start-up every effect is known).
	 * @return the limit of every limited effect, by name
	 */
	public Map<String, Integer> limits() {
		Map<String, Integer> known = this.limits;
		if (known == null) {
			known = Map.copyOf(new TreeMap<>(this.source.get()));
			this.limits = known;
		}
		return known;
	}

	/** Makes sure, once, that every limited effect has its N slot rows. */
	private void ensureSlots() {
		if (!this.ensured) {
			synchronized (this) {
				if (!this.ensured) {
					limits().forEach(this::ensureSlots);
					this.ensured = true;
				}
			}
		}
	}

	private void ensureSlots(String effectName, int limit) {
		this.jdbc.sql("""
				INSERT INTO eec_effect_slot (effect_name, slot, updated_at)
				SELECT ?, g, ductor_now() FROM generate_series(1, ?) AS g
				ON CONFLICT (effect_name, slot) DO NOTHING""").params(effectName, limit).update();
	}

	/**
	 * Claims due intents of the limited effects, each effect in a transaction of its own
	 * and never more than its free slots.
	 * @return at most {@code limit} intents claimed for {@code owner}
	 */
	List<ClaimedIntent> claim(IntentClaims claims, String owner, Duration lease, int limit) {
		ensureSlots();
		List<ClaimedIntent> claimed = new ArrayList<>();
		for (Map.Entry<String, Integer> effect : limits().entrySet()) {
			if (claimed.size() >= limit) {
				break;
			}
			int room = limit - claimed.size();
			List<ClaimedIntent> taken = this.transactions
				.execute((status) -> claimOne(claims, owner, lease, effect.getKey(), effect.getValue(), room));
			if (taken != null) {
				claimed.addAll(taken);
			}
		}
		return claimed;
	}

	private List<ClaimedIntent> claimOne(IntentClaims claims, String owner, Duration lease, String effectName,
			int slotCount, int room) {
		List<Integer> locked = this.template.queryForList(LOCK_SQL, Integer.class, effectName, slotCount);
		if (locked.isEmpty()) {
			return List.of();
		}
		List<Integer> free = this.template.execute(FREE_SQL, (PreparedStatement statement) -> {
			statement.setString(1, effectName);
			statement.setArray(2, statement.getConnection().createArrayOf("int", locked.toArray()));
			statement.setString(3, effectName);
			statement.setArray(4, statement.getConnection().createArrayOf("int", locked.toArray()));
			List<Integer> slots = new ArrayList<>();
			try (var rs = statement.executeQuery()) {
				while (rs.next()) {
					slots.add(rs.getInt(1));
				}
			}
			return slots;
		});
		if (free == null || free.isEmpty()) {
			return List.of();
		}
		int wanted = Math.min(free.size(), room);
		List<ClaimedIntent> claimed = claims.claim(owner, lease, wanted, effectName);
		if (claimed.isEmpty()) {
			return claimed;
		}
		Integer[] slots = new Integer[claimed.size()];
		Long[] ids = new Long[claimed.size()];
		Integer[] attempts = new Integer[claimed.size()];
		for (int i = 0; i < claimed.size(); i++) {
			slots[i] = free.get(i);
			ids[i] = claimed.get(i).id();
			attempts[i] = claimed.get(i).attempt();
		}
		this.template.execute(TAKE_SQL, (PreparedStatement statement) -> {
			statement.setArray(1, statement.getConnection().createArrayOf("int", slots));
			statement.setArray(2, statement.getConnection().createArrayOf("bigint", ids));
			statement.setArray(3, statement.getConnection().createArrayOf("int", attempts));
			statement.setString(4, effectName);
			return statement.executeUpdate();
		});
		return claimed;
	}

	/**
	 * @return every limited effect with its limit and the slots in use across all
	 * instances
	 */
	public List<EffectConcurrency> concurrency() {
		Map<String, Integer> used = inUse();
		return limits().entrySet()
			.stream()
			.map((limit) -> new EffectConcurrency(limit.getKey(), limit.getValue(),
					used.getOrDefault(limit.getKey(), 0)))
			.toList();
	}

	/**
	 * @return the slots in use of every limited effect, by name (0 for an effect with
	 * none in use)
	 */
	public Map<String, Integer> inUse() {
		ensureSlots();
		Map<String, Integer> known = limits();
		Map<String, Integer> used = new TreeMap<>();
		known.keySet().forEach((name) -> used.put(name, 0));
		if (known.isEmpty()) {
			return used;
		}
		this.template.execute(IN_USE_SQL, (PreparedStatement statement) -> {
			statement.setArray(1, statement.getConnection().createArrayOf("text", known.keySet().toArray()));
			try (var rs = statement.executeQuery()) {
				while (rs.next()) {
					used.put(rs.getString(1), rs.getInt(2));
				}
			}
			return null;
		});
		return used;
	}

}
