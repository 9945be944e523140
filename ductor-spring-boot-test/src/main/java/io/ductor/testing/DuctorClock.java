package io.ductor.testing;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Ductor's clock in a test: the functions {@code ductor_now()} and
 * {@code ductor_clock()}, which every statement of Ductor reads the time through,
 * replaced by ones that return a fixed instant. Replacing a function invalidates the
 * plans that inlined it, prepared statements included, so the next statement sees the new
 * time. The functions are replaced where Ductor's SQL finds them (the schema on the
 * search path that holds them).
 */
final class DuctorClock {

	private static final DateTimeFormatter ISO = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSSXXX");

	private final JdbcTemplate jdbc;

	private String schema;

	DuctorClock(JdbcTemplate jdbc) {
		this.jdbc = jdbc;
	}

	/** Stop Ductor's clock at the server's time now. */
	synchronized void freezeAtServerTime() {
		freezeAt(this.jdbc.queryForObject("SELECT clock_timestamp()", OffsetDateTime.class));
	}

	synchronized OffsetDateTime now() {
		return this.jdbc.queryForObject("SELECT ductor_now()", OffsetDateTime.class);
	}

	synchronized void advance(Duration duration) {
		freezeAt(now().plus(duration));
	}

	/** Give Ductor the server's clock back. */
	synchronized void release() {
		replace("ductor_now", "STABLE", "SELECT now()");
		replace("ductor_clock", "VOLATILE", "SELECT clock_timestamp()");
	}

	private void freezeAt(OffsetDateTime instant) {
		String literal = ISO.format(instant.withOffsetSameInstant(ZoneOffset.UTC).truncatedTo(ChronoUnit.MICROS));
		replace("ductor_now", "STABLE", "SELECT timestamptz ''" + literal + "''");
		replace("ductor_clock", "VOLATILE", "SELECT timestamptz ''" + literal + "''");
	}

	private void replace(String function, String volatility, String body) {
		this.jdbc.execute("CREATE OR REPLACE FUNCTION " + schema() + "." + function
				+ "() RETURNS timestamptz LANGUAGE sql " + volatility + " PARALLEL SAFE AS '" + body + "'");
	}

	private String schema() {
		if (this.schema == null) {
			this.schema = this.jdbc.queryForObject(
					"SELECT quote_ident(pronamespace::regnamespace::text) FROM pg_proc WHERE oid = 'ductor_now()'::regprocedure",
					String.class);
		}
		return this.schema;
	}

}
