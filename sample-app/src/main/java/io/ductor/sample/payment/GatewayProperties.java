package io.ductor.sample.payment;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import io.ductor.sample.fault.FaultPlan;

/**
 * How the simulated payment gateway misbehaves.
 *
 * @param failureRate Share of charge requests that fail at random, from 0 to 1: half of them
 * before the charge is applied, half after it (the answer is lost).
 * @param latency How long the gateway's answer takes to come back after the charge is committed.
 */
@ConfigurationProperties("sample.gateway")
public record GatewayProperties(@DefaultValue("0") double failureRate, @DefaultValue("0s") Duration latency) {

	public GatewayProperties {
		FaultPlan.checkRate("sample.gateway.failure-rate", failureRate);
		if (latency.isNegative()) {
			throw new IllegalArgumentException("sample.gateway.latency must not be negative but was " + latency);
		}
	}

}
