package io.ductor.amqp.internal;

import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.EnumSet;

import javax.sql.DataSource;

import org.springframework.amqp.rabbit.connection.Connection;
import org.springframework.amqp.rabbit.connection.ConnectionFactory;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.amqp.DurableRabbit;
import io.ductor.effect.EffectStatus;
import io.ductor.effect.internal.IntentStatuses;

/**
 * The relay's health: down when its connection to the broker cannot be opened; with the
 * relay's backlog (messages waiting, in flight, failed, and the age of the oldest waiting
 * one) as details.
 */
public class RabbitRelayHealthIndicator extends AbstractHealthIndicator {

	/** Messages not yet sent: waiting, or in flight. */
	private static final String UNSENT = IntentStatuses.sql(EnumSet.of(EffectStatus.PENDING, EffectStatus.IN_FLIGHT));

	private static final String BACKLOG = """
			SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
			       count(*) FILTER (WHERE status = 'in_flight') AS in_flight,
			       count(*) FILTER (WHERE status = 'failed') AS failed,
			       min(created_at) FILTER (WHERE status IN %s) AS oldest,
			       ductor_now() AS db_now
			FROM eec_effect_intent
			WHERE effect_name = ? AND status IN %s""".formatted(UNSENT, IntentStatuses.LIVE_SQL);

	private final ConnectionFactory connectionFactory;

	private final JdbcClient jdbc;

	public RabbitRelayHealthIndicator(ConnectionFactory connectionFactory, DataSource dataSource) {
		super("The RabbitMQ relay's health check failed");
		this.connectionFactory = connectionFactory;
		this.jdbc = JdbcClient.create(dataSource);
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		this.jdbc.sql(BACKLOG).param(DurableRabbit.EFFECT).query((rs, row) -> {
			builder.withDetail("pending", rs.getLong("pending"))
				.withDetail("inFlight", rs.getLong("in_flight"))
				.withDetail("failed", rs.getLong("failed"));
			OffsetDateTime oldest = rs.getObject("oldest", OffsetDateTime.class);
			if (oldest != null) {
				builder.withDetail("oldestAge",
						Duration.between(oldest, rs.getObject("db_now", OffsetDateTime.class)).toString());
			}
			return row;
		}).single();
		try {
			Connection connection = this.connectionFactory.createConnection();
			if (connection.isOpen()) {
				builder.up().withDetail("broker", "reachable");
			}
			else {
				builder.down().withDetail("broker", "connection closed");
			}
		}
		catch (RuntimeException ex) {
			builder.down(ex).withDetail("broker", "unreachable");
		}
	}

}
