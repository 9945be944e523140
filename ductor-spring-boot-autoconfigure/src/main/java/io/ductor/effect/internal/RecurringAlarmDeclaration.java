package io.ductor.effect.internal;

import java.util.List;
import java.util.Objects;

import io.ductor.effect.AlarmSchedule;

/**
 * A recurring alarm declared in configuration ({@code ductor.effects.alarms.<name>}),
 * declared at start-up.
 *
 * @param name the alarm's name
 * @param property the property prefix that declares it
 * ({@code ductor.effects.alarms.nightly}), named by start-up failures
 * @param effectName the effect each occurrence runs
 * @param schedule when it fires and what happens to missed occurrences
 * @param arguments the effect's arguments as text, one per parameter: a {@code String}
 * parameter takes the text, any other reads it as JSON
 */
public record RecurringAlarmDeclaration(String name, String property, String effectName, AlarmSchedule schedule,
		List<String> arguments) {

	public RecurringAlarmDeclaration {
		Objects.requireNonNull(name, "name must not be null");
		Objects.requireNonNull(schedule, "schedule must not be null");
		arguments = (arguments != null) ? List.copyOf(arguments) : List.of();
	}

}
