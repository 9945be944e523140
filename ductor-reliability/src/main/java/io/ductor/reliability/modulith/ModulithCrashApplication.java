package io.ductor.reliability.modulith;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.builder.SpringApplicationBuilder;

/**
 * A Spring Modulith application on Ductor for the Modulith crash: {@link OrderDesk}
 * places orders, each with an {@link OrderPlaced} event, in transactions (one in ten
 * rolled back); two {@code @ApplicationModuleListener}s take them: {@link Ledger} books
 * each order once (keyed by the publication), {@link Mailer} only records its calls.
 * Every listener call is recorded, with its publication's key, on a connection of its own
 * before the listener works, so calls that a kill interrupted show. The reliability
 * suite's Modulith crash test runs two of it, kills them with SIGKILL while listeners run
 * and restarts them, and judges the tables afterwards.
 */
@SpringBootApplication
public class ModulithCrashApplication {

	/** The application's tables. */
	public static final String SCHEMA = """
			CREATE SEQUENCE IF NOT EXISTS crash_order_seq;
			CREATE TABLE IF NOT EXISTS crash_order (seq bigint PRIMARY KEY);
			CREATE TABLE IF NOT EXISTS ledger_entry (publication_key text PRIMARY KEY, seq bigint NOT NULL);
			CREATE TABLE IF NOT EXISTS listener_call (
			    id bigserial PRIMARY KEY, listener text NOT NULL, publication_key text NOT NULL, seq bigint NOT NULL)""";

	public static void main(String[] args) {
		new SpringApplicationBuilder(ModulithCrashApplication.class).web(WebApplicationType.NONE).run(args);
	}

}
