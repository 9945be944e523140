package io.ductor.sample.fault;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * How the sample's simulated receivers misbehave, so that retries, lost answers and
 * decisions can be watched.
 *
 * @param gateway The payment gateway: failures before a charge is applied or with its
 * answer lost, and how long the answer takes after the charge committed.
 * @param mailer The mail server: refused messages or lost confirmations, and how long it
 * takes to answer.
 */
@ConfigurationProperties("sample")
public record SimulationProperties(@DefaultValue Receiver gateway, @DefaultValue Receiver mailer) {

	public SimulationProperties {
		gateway.check("sample.gateway");
		mailer.check("sample.mailer");
	}

	/**
	 * One simulated receiver.
	 *
	 * @param failureRate Share of requests that fail at random, from 0 to 1: half of them
	 * before the receiver applies the request, half after it (the answer is lost).
	 * @param latency How long the receiver's answer takes to come back.
	 */
	public record Receiver(@DefaultValue("0") double failureRate, @DefaultValue("0s") Duration latency) {

		void check(String prefix) {
			if (!(this.failureRate >= 0 && this.failureRate <= 1)) {
				throw new IllegalArgumentException(
						prefix + ".failure-rate must be between 0 and 1 but was " + this.failureRate);
			}
			if (this.latency.isNegative()) {
				throw new IllegalArgumentException(prefix + ".latency must not be negative but was " + this.latency);
			}
		}

	}

}
