package io.ductor.sample.feed;

import java.time.OffsetDateTime;
import java.util.List;

import javax.sql.DataSource;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /feed}: the latest lines of the order feed, newest first.
 */
@RestController
class FeedController {

	private final JdbcClient jdbc;

	FeedController(DataSource dataSource) {
		this.jdbc = JdbcClient.create(dataSource);
	}

	@GetMapping("/feed")
	List<FeedEntry> latest(@RequestParam(defaultValue = "10") int limit) {
		return this.jdbc.sql("""
				SELECT order_id, message_key, summary, kafka_partition, kafka_offset, received_at
				FROM sample_order_feed ORDER BY id DESC LIMIT ?""")
			.param(Math.max(1, Math.min(limit, 100)))
			.query((rs, row) -> new FeedEntry(rs.getString("order_id"), rs.getString("message_key"),
					rs.getString("summary"), rs.getInt("kafka_partition"), rs.getLong("kafka_offset"),
					rs.getObject("received_at", OffsetDateTime.class)))
			.list();
	}

}
