package io.ductor.modulithapp;

import org.springframework.boot.autoconfigure.SpringBootApplication;

/** A two-module Modulith application (order, inventory) on Ductor, for the tests. */
@SpringBootApplication
public class ModulithApp {

	/** The application's own tables. */
	public static final String SCHEMA = """
			CREATE TABLE IF NOT EXISTS orders (id text PRIMARY KEY);
			CREATE TABLE IF NOT EXISTS stock_reservation (
			    order_id text NOT NULL, publication_key text NOT NULL UNIQUE)""";

	/** Test settings: quick polls and retries, three attempts. */
	public static final String[] PROPERTIES = { "ductor.effects.drainer.poll-interval=100ms",
			"ductor.effects.backoff.initial=100ms", "ductor.effects.backoff.max=200ms", "ductor.effects.max-attempts=3",
			"management.endpoints.web.exposure.include=ductor", "management.endpoints.jmx.exposure.include=ductor" };

}
