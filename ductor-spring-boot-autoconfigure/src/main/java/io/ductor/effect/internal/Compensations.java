package io.ductor.effect.internal;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.CompensationChain;
import io.ductor.effect.DurableEffectException;
import io.ductor.effect.EffectIntent;
import io.ductor.effect.EffectRequest;
import io.ductor.effect.Receiver;
import io.ductor.internal.Ids;
import io.ductor.run.RunCompensation;
import io.ductor.run.internal.RunningTick;

/**
 * Sagas: the compensations a run's ticks register for the effects they record
 * ({@code eec_run_compensation}), and their recording when the run fails.
 * <p>
 * When a run fails, in the failing transaction and in reverse order of the ticks that
 * registered them (within one tick, in reverse order of registration), each registered
 * compensation is looked at against its original intent:
 * <ul>
 * <li>the original is {@code pending} and was never attempted: it is cancelled, since it
 * never reached its receiver and so has nothing to undo;</li>
 * <li>any other original with at least one attempt, whatever its status
 * ({@code completed}, {@code in_flight}, {@code pending} for a retry, {@code failed},
 * {@code needs_decision}, or {@code cancelled} after an attempt), or one already purged
 * by retention (only finished intents are): it may have been applied, so its compensation
 * is recorded, as an ordinary intent with the key
 * {@code "compensate:" + the original's key} and the ordering key
 * {@code "compensate:" + run id}, linked to the run and to the original;</li>
 * <li>an original that was never attempted in any other status (cancelled before it ran):
 * nothing.</li>
 * </ul>
 * The ordering key runs the run's compensations one at a time, each after the previous
 * one settled (a compensation that fails or needs a decision holds up the next ones, as
 * any ordering key does); and a compensation is not dispatched while its original may
 * still run (pending, in flight, or waiting for a decision). A compensation already
 * recorded (its key exists) is not recorded again, so failing a run twice, or a
 * {@code COMPENSATE} decision on a run that already failed, records nothing twice.
 */
public class Compensations {

	/**
	 * The prefix of compensation keys and of the ordering key of a run's compensations.
	 */
	public static final String PREFIX = "compensate:";

	private final JdbcClient jdbc;

	private final EffectRegistry registry;

	private final EffectPayloads payloads;

	private final EffectWriter writer;

	private final IntentRecorder recorder;

	private final IntentReads reads;

	private final OperatorMoves moves;

	public Compensations(DataSource dataSource, EffectRegistry registry, EffectPayloads payloads, EffectWriter writer,
			IntentRecorder recorder, IntentReads reads, OperatorMoves moves) {
		this.jdbc = JdbcClient.create(dataSource);
		this.registry = registry;
		this.payloads = payloads;
		this.writer = writer;
		this.recorder = recorder;
		this.reads = reads;
		this.moves = moves;
	}

	/**
	 * Register, in the current tick, the compensation of the intent with key
	 * {@code originalKey}. The first registration for a key in a run wins.
	 * @param required whether a call outside a tick of a run is refused (a compensation
	 * passed at the call) rather than ignored (one declared on the effect)
	 */
	public void register(String originalKey, EffectRequest compensation, boolean required) {
		RunningTick tick = RunningTick.current().orElse(null);
		if (tick == null) {
			if (required) {
				throw new DurableEffectException("Effect intent '" + originalKey + "' was scheduled with compensation '"
						+ compensation.effectName() + "' outside a tick: a compensation belongs to a run and is "
						+ "registered by the tick that records the effect. Schedule it from a TickService step.");
			}
			return;
		}
		EffectDefinition effect = this.registry.find(Ids.require("compensation effectName", compensation.effectName()));
		if (effect == null) {
			throw new DurableEffectException("No @DurableEffect named '" + compensation.effectName()
					+ "' in this application, so it cannot compensate '" + originalKey + "'");
		}
		String payload = this.payloads.write(effect, compensation.args().toArray());
		this.jdbc.sql("""
				INSERT INTO eec_run_compensation (run_id, original_key, seq, effect_name, payload)
				VALUES (:run, :key, :seq, :effect, :payload::jsonb)
				ON CONFLICT (run_id, original_key) DO NOTHING""")
			.param("run", tick.runId())
			.param("key", originalKey)
			.param("seq", tick.seq())
			.param("effect", effect.name())
			.param("payload", payload)
			.update();
	}

	/**
	 * Register the compensation an effect declares, with the same arguments, if it
	 * declares one.
	 */
	public void registerDeclared(EffectDefinition effect, Object[] args, String key) {
		if (effect.compensation() != null) {
			register(key, EffectRequest.of(effect.compensation(), args), false);
		}
	}

	/**
	 * Records the compensations of a run that failed in the current transaction.
	 * @param runId the run
	 * @return how many new compensations were recorded
	 */
	public int runFailed(String runId) {
		this.moves.cancelNeverStarted(runId);
		List<Registered> registered = this.jdbc.sql("""
				SELECT c.original_key, c.effect_name, c.payload::text AS payload, i.id, i.attempts,
				    i.trace_context::text AS trace_context
				FROM eec_run_compensation c
				LEFT JOIN eec_effect_intent i ON i.idempotency_key = c.original_key
				WHERE c.run_id = :run
				ORDER BY c.seq DESC, c.position DESC""")
			.param("run", runId)
			.query((rs, row) -> new Registered(rs.getString("original_key"), rs.getString("effect_name"),
					rs.getString("payload"), (Long) rs.getObject("id"), rs.getInt("attempts"),
					rs.getString("trace_context")))
			.list();
		int recorded = 0;
		String ordering = derived(runId);
		for (Registered compensation : registered) {
			if (compensation.originalId() != null && compensation.attempts() == 0) {
				continue;
			}
			String key = derived(compensation.originalKey());
			if (this.reads.findByKey(key).isPresent()) {
				continue;
			}
			EffectDefinition effect = this.registry.find(compensation.effectName());
			if (effect != null) {
				this.writer.record(effect, this.payloads.read(effect, compensation.payloadJson()), key, ordering, null,
						null, runId);
			}
			else {
				// the effect left the application: record it all the same, the drainer
				// fails it with the
				// reason, in the trace of the intent it compensates (no observation
				// records it here)
				this.recorder
					.insert(new IntentRecorder.NewIntent(compensation.effectName(), key, compensation.payloadJson(),
							EffectPayloads.fingerprint(compensation.effectName(), compensation.payloadJson()),
							Receiver.IDEMPOTENT, 1, Duration.ZERO, ordering, null, runId, compensation.traceContext()));
			}
			this.recorder.markCompensation(key, (compensation.originalId() != null) ? compensation.originalId() : 0L);
			recorded++;
		}
		return recorded;
	}

	/**
	 * The compensation chain of a run, in the order its compensations run.
	 * @param runId the run
	 * @return the chain; empty steps when the run registered none
	 */
	public CompensationChain chain(String runId) {
		RunCompensation state = this.jdbc.sql("SELECT compensation FROM eec_run WHERE id = ?")
			.param(runId)
			.query((rs, row) -> (rs.getString(1) != null)
					? RunCompensation.valueOf(rs.getString(1).toUpperCase(java.util.Locale.ROOT))
					: RunCompensation.NONE)
			.optional()
			.orElse(RunCompensation.NONE);
		List<Step> steps = this.jdbc.sql("""
				SELECT original_key, seq, effect_name FROM eec_run_compensation WHERE run_id = ?
				ORDER BY seq DESC, position DESC""")
			.param(runId)
			.query((ResultSet rs, int row) -> new Step(rs.getString(1), rs.getLong(2), rs.getString(3)))
			.list();
		Map<String, EffectIntent> intents = this.reads.listByRun(runId)
			.stream()
			.collect(Collectors.toMap(EffectIntent::idempotencyKey, Function.identity()));
		return new CompensationChain(runId, state,
				steps.stream()
					.map((step) -> new CompensationChain.Link(step.seq(), step.originalKey(), step.effectName(),
							intents.get(step.originalKey()), intents.get(derived(step.originalKey()))))
					.toList());
	}

	/**
	 * {@code "compensate:" + value}, or for a value too long to keep within an
	 * identifier's length, {@code "compensate:sha256:" + its SHA-256}.
	 */
	static String derived(String value) {
		if (PREFIX.length() + value.length() <= Ids.MAX_LENGTH) {
			return PREFIX + value;
		}
		try {
			byte[] digest = MessageDigest.getInstance("SHA-256").digest(value.getBytes(StandardCharsets.UTF_8));
			return PREFIX + "sha256:" + HexFormat.of().formatHex(digest);
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private record Registered(String originalKey, String effectName, String payloadJson, Long originalId, int attempts,
			String traceContext) {
	}

	private record Step(String originalKey, long seq, String effectName) {
	}

}
