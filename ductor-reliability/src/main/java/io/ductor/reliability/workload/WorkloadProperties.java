package io.ductor.reliability.workload;

import java.nio.file.Path;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * What the workload does.
 *
 * @param instance this instance's name, part of every stamp it makes
 * @param generation how often this instance was (re)started before, part of every stamp
 * @param runs how many runs the ticks spread over ({@code wl-run-1} ...)
 * @param tickers how many threads tick at once
 * @param tickPauseMillis the pause between two ticks of one thread
 * @param ticking whether ticks run at all
 * @param effectMillis how long the receiver takes after it applied a call, before it
 * answers: the window in which a crash makes the call run again
 * @param ackDirectory where acknowledged ticks are appended, one file per instance and
 * generation
 */
@ConfigurationProperties("workload")
public record WorkloadProperties(@DefaultValue("wl") String instance, @DefaultValue("0") int generation,
		@DefaultValue("4") int runs, @DefaultValue("2") int tickers, @DefaultValue("5") int tickPauseMillis,
		@DefaultValue("true") boolean ticking, @DefaultValue("3") int effectMillis, Path ackDirectory) {

	/**
	 * @return the prefix of this instance's stamps in this generation
	 */
	public String stampPrefix() {
		return this.instance + "-g" + this.generation + "-";
	}

}
