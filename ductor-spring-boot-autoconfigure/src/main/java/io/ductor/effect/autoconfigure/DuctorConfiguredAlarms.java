package io.ductor.effect.autoconfigure;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.core.env.Environment;
import org.springframework.scheduling.support.CronExpression;

import io.ductor.autoconfigure.internal.PropertyChecks;
import io.ductor.effect.AlarmSchedule;
import io.ductor.effect.MissedOccurrences;

/**
 * The recurring alarms of {@code ductor.effects.alarms}, by alarm name. Alarm names may
 * hold dots ({@code billing.nightly}), so the keys bind in every form Spring Boot reads:
 * {@code ductor.effects.alarms.billing.nightly.cron},
 * {@code ductor.effects.alarms[billing.nightly].cron}, YAML nested or bracketed, and the
 * environment variable {@code DUCTOR_EFFECTS_ALARMS_BILLING_NIGHTLY_CRON} (which spells
 * the name in lower case). A property an alarm does not have fails start-up naming it.
 *
 * @param byName the alarms, by name
 */
public record DuctorConfiguredAlarms(Map<String, Alarm> byName) {

	/** No alarms. */
	public static final DuctorConfiguredAlarms NONE = new DuctorConfiguredAlarms(Map.of());

	public DuctorConfiguredAlarms {
		byName = java.util.Collections.unmodifiableMap(new TreeMap<>(byName));
	}

	/**
	 * Binds the alarms of an environment, as Ductor's auto-configuration does.
	 * @param environment the application's environment
	 * @return the alarms, checked
	 * @throws IllegalArgumentException naming a property whose value is invalid
	 * @throws io.ductor.DuctorException naming a property that sets nothing an alarm has
	 */
	public static DuctorConfiguredAlarms bind(Environment environment) {
		return EffectKeys.alarms(environment);
	}

	/**
	 * One recurring alarm. Exactly one of cron and every is set.
	 *
	 * @param cron A Spring cron expression, six fields with seconds first ("0 0 9 * *
	 * MON-FRI"), read in the zone.
	 * @param every A fixed period instead of a cron expression: the occurrences are the
	 * whole multiples of it since 1970-01-01T00:00:00Z (every=1h fires at the top of each
	 * UTC hour).
	 * @param zone The time zone of the cron expression, a java.time zone id
	 * ("Europe/Berlin").
	 * @param effect The name of the @DurableEffect each occurrence runs.
	 * @param arguments The effect's arguments, one per parameter: a String parameter
	 * takes the text, any other parameter reads it as JSON (42, true, {"sku": "book-1"}).
	 * @param missed What happens to occurrences reached more than the grace after their
	 * instant (every instance was down): run-once (one occurrence, keyed by the first
	 * missed instant, runs for all of them), run-each (each runs, the newest 1,000 at
	 * most) or skip (none runs).
	 * @param grace How late an occurrence may be reached and still count as on time.
	 */
	public record Alarm(String cron, Duration every, @DefaultValue("UTC") String zone, String effect,
			List<String> arguments, @DefaultValue("run-once") MissedOccurrences missed,
			@DefaultValue("1m") Duration grace) {

		public Alarm {
			arguments = (arguments != null) ? List.copyOf(arguments) : List.of();
		}

		void check(String prefix) {
			if ((this.cron == null) == (this.every == null)) {
				throw new IllegalArgumentException(prefix + " must set exactly one of " + prefix + ".cron and " + prefix
						+ ".every but " + ((this.cron == null) ? "set neither" : "set both"));
			}
			if (this.effect == null || this.effect.isBlank()) {
				throw new IllegalArgumentException(prefix + ".effect must name the @DurableEffect the alarm runs");
			}
			if (this.cron != null && !CronExpression.isValidExpression(this.cron)) {
				String reason;
				try {
					CronExpression.parse(this.cron);
					reason = "";
				}
				catch (IllegalArgumentException ex) {
					reason = ": " + ex.getMessage();
				}
				throw new IllegalArgumentException(prefix + ".cron is not a valid cron expression (six fields, seconds "
						+ "first, as \"0 0 9 * * *\") but was '" + this.cron + "'" + reason);
			}
			if (this.every != null) {
				PropertyChecks.requirePositive(prefix + ".every", this.every);
				if (this.every.toNanos() % 1_000_000 != 0) {
					throw new IllegalArgumentException(
							prefix + ".every must be a whole number of milliseconds but was " + this.every);
				}
			}
			try {
				ZoneId.of(this.zone);
			}
			catch (DateTimeException ex) {
				throw new IllegalArgumentException(prefix + ".zone is not a known time zone id (such as Europe/Berlin"
						+ " or UTC) but was '" + this.zone + "'");
			}
			if (this.grace.isNegative()) {
				throw new IllegalArgumentException(prefix + ".grace must not be negative but was " + this.grace);
			}
			PropertyChecks.requireAtMostMax(prefix + ".grace", this.grace);
		}

		AlarmSchedule toSchedule() {
			AlarmSchedule schedule = (this.cron != null) ? AlarmSchedule.cron(this.cron, ZoneId.of(this.zone))
					: AlarmSchedule.every(this.every);
			return schedule.withMissed(this.missed).withGrace(this.grace);
		}

	}

}
