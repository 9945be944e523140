package io.ductor.effect.internal;

import java.time.Duration;
import java.util.Objects;
import java.util.UUID;

import io.ductor.effect.DurableEffectException;
import io.ductor.effect.EffectOutbox;
import io.ductor.effect.EffectRequest;
import io.ductor.internal.Ids;

/**
 * Ductor's {@link EffectOutbox}: records intents, alarm occurrences and compensations in
 * the caller's transaction.
 */
public final class DefaultEffectOutbox implements EffectOutbox {

	private final EffectRegistry registry;

	private final EffectWriter writer;

	private final IntentRecorder recorder;

	private final AlarmOccurrences occurrences;

	private final Compensations compensations;

	public DefaultEffectOutbox(EffectRegistry registry, EffectWriter writer, IntentRecorder recorder,
			AlarmOccurrences occurrences, Compensations compensations) {
		this.registry = registry;
		this.writer = writer;
		this.recorder = recorder;
		this.occurrences = occurrences;
		this.compensations = compensations;
	}

	@Override
	public String schedule(EffectRequest request) {
		EffectDefinition effect = effect(request.effectName());
		Object[] args = request.args().toArray();
		String key = this.writer.record(effect, args, request.key(), request.orderingKey(), request.delay(), null);
		if (request.compensation() != null) {
			this.compensations.register(key, request.compensation(), true);
		}
		else {
			this.compensations.registerDeclared(effect, args, key);
		}
		return key;
	}

	@Override
	public void compensateWith(String key, EffectRequest compensation) {
		Ids.require("key", key);
		Objects.requireNonNull(compensation, "compensation must not be null");
		this.writer.requireTransaction(compensation.effectName());
		this.compensations.register(key, compensation, true);
	}

	@Override
	public String scheduleAlarm(String alarmName, Duration delay, EffectRequest request) {
		Ids.require("alarmName", alarmName);
		Objects.requireNonNull(delay, "delay must not be null");
		if (request.key() != null) {
			throw new IllegalArgumentException(
					"An alarm occurrence gets a new key each time it is scheduled; " + "do not set one on the request");
		}
		EffectDefinition effect = effect(request.effectName());
		this.writer.requireTransaction(effect.name());
		holdAlarm(alarmName);
		this.occurrences.supersedeAlarm(alarmName);
		String key = "alarm:" + alarmName + ":" + UUID.randomUUID();
		return this.writer.record(effect, request.args().toArray(), key, request.orderingKey(), delay, alarmName);
	}

	@Override
	public boolean cancelAlarm(String alarmName) {
		Ids.require("alarmName", alarmName);
		this.writer.requireTransaction("alarm '" + alarmName + "'");
		holdAlarm(alarmName);
		return this.occurrences.supersedeAlarm(alarmName) > 0;
	}

	/** Takes the alarm's lock until the caller's transaction completes. */
	private void holdAlarm(String alarmName) {
		this.writer.holdUntilCommit("ductor.alarm:" + alarmName, "Alarm '" + alarmName + "'",
				"Schedule or cancel it in the outer transaction, or after it commits.");
		this.recorder.lockUntilCommit("ductor.alarm:" + alarmName);
	}

	private EffectDefinition effect(String name) {
		return effect(this.registry, name);
	}

	/**
	 * The declared effect named {@code name}.
	 * @throws DurableEffectException when there is none
	 */
	static EffectDefinition effect(EffectRegistry registry, String name) {
		EffectDefinition effect = registry.find(Ids.require("effectName", name));
		if (effect == null) {
			throw new DurableEffectException("No @DurableEffect named '" + name + "' in this application");
		}
		return effect;
	}

}
