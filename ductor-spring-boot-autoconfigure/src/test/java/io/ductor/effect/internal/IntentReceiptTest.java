package io.ductor.effect.internal;

import java.time.Duration;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.EffectStatus;
import io.ductor.effect.internal.IntentClaims.ClaimedIntent;
import io.ductor.effect.internal.IntentOutcomes.Completion;
import io.ductor.jdbc.internal.DuctorSchema;
import io.ductor.test.TestDatabase;
import io.ductor.test.TestDatabases;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The receipt of a completed attempt (what a relay's broker acknowledged) is kept with
 * its intent by the completion that records the attempt, in a column no index names, so
 * completions stay heap-only updates; an attempt without one, or one that is retried,
 * keeps none.
 */
class IntentReceiptTest {

	@Test
	void aCompletionKeepsTheReceiptItCarriesAndNoneOtherwise() {
		TestDatabase database = TestDatabases.create();
		try (HikariDataSource dataSource = database.newDataSource(2)) {
			Flyway.configure()
				.dataSource(dataSource)
				.locations(DuctorSchema.LOCATION)
				.table(DuctorSchema.HISTORY_TABLE)
				.load()
				.migrate();
			JdbcClient jdbc = JdbcClient.create(dataSource);
			for (String key : List.of("relayed", "plain", "retried")) {
				jdbc.sql("""
						INSERT INTO eec_effect_intent (effect_name, idempotency_key, payload, payload_fingerprint,
						    max_attempts)
						VALUES ('e', ?, '[]', 'f', 3)""").param(key).update();
			}
			List<ClaimedIntent> claimed = new IntentClaims(dataSource).claim("drainer", Duration.ofMinutes(1), 10);
			assertThat(claimed).hasSize(3);
			List<Completion> completions = claimed.stream().map((intent) -> switch (intent.key()) {
				case "relayed" -> new Completion(intent.id(), intent.attempt(), EffectStatus.COMPLETED, null, null,
						"acknowledged by Kafka: topic 't', partition 1, offset 7");
				case "plain" -> new Completion(intent.id(), intent.attempt(), EffectStatus.COMPLETED, null, null);
				default ->
					new Completion(intent.id(), intent.attempt(), EffectStatus.PENDING, "boom", Duration.ofMinutes(1));
			}).toList();
			new IntentOutcomes(dataSource).complete("drainer", completions);

			assertThat(receipt(jdbc, "relayed")).isEqualTo("acknowledged by Kafka: topic 't', partition 1, offset 7");
			assertThat(receipt(jdbc, "plain")).isNull();
			assertThat(receipt(jdbc, "retried")).isNull();
			assertThat(jdbc.sql("SELECT indexdef FROM pg_indexes WHERE tablename = 'eec_effect_intent'")
				.query(String.class)
				.list()).as("indexes of eec_effect_intent")
				.isNotEmpty()
				.noneMatch((index) -> index.contains("receipt"));
		}
	}

	private static String receipt(JdbcClient jdbc, String key) {
		return jdbc.sql("SELECT receipt FROM eec_effect_intent WHERE idempotency_key = ?")
			.param(key)
			.query(String.class)
			.optional()
			.orElse(null);
	}

}
