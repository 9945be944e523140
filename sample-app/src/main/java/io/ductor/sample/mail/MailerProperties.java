package io.ductor.sample.mail;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.ductor.sample.fault.FaultPlan;

/**
 * How the simulated mail server misbehaves.
 *
 * @param failureRate Share of messages that fail at random, from 0 to 1: half of them refused
 * before sending, half sent with the answer lost.
 * @param latency How long the mail server takes to answer.
 */
@ConfigurationProperties("sample.mailer")
public record MailerProperties(@DefaultValue("0") double failureRate, @DefaultValue("0s") Duration latency) {

	public MailerProperties {
		FaultPlan.checkRate("sample.mailer.failure-rate", failureRate);
		if (latency.isNegative()) {
			throw new IllegalArgumentException("sample.mailer.latency must not be negative but was " + latency);
		}
	}

}
