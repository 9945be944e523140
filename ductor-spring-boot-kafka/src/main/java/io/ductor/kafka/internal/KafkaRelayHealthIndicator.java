package io.ductor.kafka.internal;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeClusterResult;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.jdbc.core.simple.JdbcClient;

import io.ductor.effect.internal.IntentStatuses;
import io.ductor.kafka.DurableKafka;

/**
 * The {@code ductorKafka} health contribution: the broker answers a describe-cluster
 * request within the timeout (DOWN otherwise), with the relay's backlog (messages waiting
 * to be sent, in flight, failed) as details.
 */
public class KafkaRelayHealthIndicator extends AbstractHealthIndicator {

	static final String BACKLOG = """
			SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
			       count(*) FILTER (WHERE status = 'in_flight') AS in_flight,
			       count(*) FILTER (WHERE status IN %s) AS failed
			FROM eec_effect_intent
			WHERE effect_name = ? AND status IN %s
			""".formatted(IntentStatuses.PARKED_SQL, IntentStatuses.LIVE_SQL);

	private final Map<String, Object> adminConfig;

	private final Duration timeout;

	private final JdbcClient jdbc;

	public KafkaRelayHealthIndicator(Map<String, Object> adminConfig, Duration timeout, DataSource dataSource) {
		super("Kafka relay health check failed");
		this.adminConfig = Map.copyOf(adminConfig);
		this.timeout = timeout;
		this.jdbc = JdbcClient.create(dataSource);
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		Map<String, Object> backlog = this.jdbc.sql(BACKLOG).param(DurableKafka.EFFECT_NAME).query().singleRow();
		builder.withDetail("pending", backlog.get("pending"))
			.withDetail("inFlight", backlog.get("in_flight"))
			.withDetail("failed", backlog.get("failed"));
		int millis = (int) Math.min(Integer.MAX_VALUE, this.timeout.toMillis());
		Admin admin = Admin.create(this.adminConfig);
		try {
			DescribeClusterResult cluster = admin.describeCluster(new DescribeClusterOptions().timeoutMs(millis));
			String clusterId = cluster.clusterId().get(millis, TimeUnit.MILLISECONDS);
			int nodes = cluster.nodes().get(millis, TimeUnit.MILLISECONDS).size();
			builder.up().withDetail("clusterId", clusterId).withDetail("nodes", nodes);
		}
		catch (Exception ex) {
			if (ex instanceof InterruptedException) {
				Thread.currentThread().interrupt();
			}
			builder.down().withDetail("broker", "not reachable within " + this.timeout + ": " + ex);
		}
		finally {
			admin.close(this.timeout);
		}
	}

}
