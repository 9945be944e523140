package io.ductor.health.autoconfigure;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

import io.ductor.autoconfigure.internal.PropertyChecks;

/**
 * Thresholds that turn the ductor health contributor DOWN, under {@code ductor.health}.
 * Both are off unless set.
 *
 * @param maxOldestAge DOWN when the oldest due effect intent has waited longer than this.
 * Unset: never.
 * @param maxParked DOWN when more effect intents than this are failed or need a decision.
 * Unset: never.
 */
@ConfigurationProperties("ductor.health")
public record DuctorHealthProperties(Duration maxOldestAge, Integer maxParked) {

	public DuctorHealthProperties {
		if (maxOldestAge != null) {
			PropertyChecks.requirePositive("ductor.health.max-oldest-age", maxOldestAge);
		}
		if (maxParked != null && maxParked < 0) {
			throw new IllegalArgumentException("ductor.health.max-parked must not be negative but was " + maxParked);
		}
	}

}
