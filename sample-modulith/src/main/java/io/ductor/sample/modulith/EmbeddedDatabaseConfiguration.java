package io.ductor.sample.modulith;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Starts an embedded PostgreSQL for the sample when no {@code spring.datasource.url} is
 * set, so the sample runs with one command on a machine that has only a JDK. Its data
 * survives restarts in {@code sample.database.directory}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${spring.datasource.url:}'.isEmpty()")
class EmbeddedDatabaseConfiguration {

	@Bean(destroyMethod = "close")
	EmbeddedPostgres embeddedPostgres(@Value("${sample.database.directory}") Path directory,
			@Value("${sample.database.port:0}") int port) throws IOException {
		Files.createDirectories(directory);
		// stopped by the context (destroyMethod), after Ductor's workers and the web
		// server, rather than by a JVM shutdown hook of its own that would race them
		EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
			.setDataDirectory(directory)
			.setCleanDataDirectory(false)
			.setRegisterShutdownHook(false);
		if (port > 0) {
			builder.setPort(port);
		}
		return builder.start();
	}

	@Bean
	DataSource dataSource(EmbeddedPostgres postgres) {
		HikariDataSource dataSource = new HikariDataSource();
		dataSource.setJdbcUrl(postgres.getJdbcUrl("postgres", "postgres"));
		dataSource.setUsername("postgres");
		dataSource.setPoolName("sample-modulith");
		return dataSource;
	}

}
