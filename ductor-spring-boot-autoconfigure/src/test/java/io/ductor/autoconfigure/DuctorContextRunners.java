package io.ductor.autoconfigure;

import java.util.ArrayList;
import java.util.List;

import io.ductor.test.PostgresExtension;
import io.ductor.test.TestDatabase;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.transaction.autoconfigure.TransactionAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The context runner the auto-configuration tests share: a pool of four connections to
 * the test class's database, transactions, Jackson, and the Ductor auto-configurations
 * under test.
 */
public final class DuctorContextRunners {

	private DuctorContextRunners() {
	}

	/**
	 * A runner on {@code postgres}'s database with the given Ductor auto-configurations.
	 */
	public static ApplicationContextRunner onDatabase(PostgresExtension postgres, Class<?>... ductorConfigurations) {
		return onDatabase(postgres.springProperties(), ductorConfigurations);
	}

	/** A runner on {@code database} with the given Ductor auto-configurations. */
	public static ApplicationContextRunner onDatabase(TestDatabase database, Class<?>... ductorConfigurations) {
		return onDatabase(database.springProperties(), ductorConfigurations);
	}

	private static ApplicationContextRunner onDatabase(String[] datasource, Class<?>[] ductorConfigurations) {
		List<Class<?>> configurations = new ArrayList<>(
				List.of(DataSourceAutoConfiguration.class, DataSourceTransactionManagerAutoConfiguration.class,
						TransactionAutoConfiguration.class, JacksonAutoConfiguration.class));
		configurations.addAll(List.of(ductorConfigurations));
		return new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(configurations.toArray(Class<?>[]::new)))
			.withPropertyValues(datasource)
			.withPropertyValues("spring.datasource.hikari.maximum-pool-size=4");
	}

}
