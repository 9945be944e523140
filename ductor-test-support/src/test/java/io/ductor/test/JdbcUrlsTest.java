package io.ductor.test;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class JdbcUrlsTest {

	@Test
	void substitutesTheDatabaseKeepingHostsAndParameters() {
		assertThat(JdbcUrls.withDatabase("jdbc:postgresql://127.0.0.1:5432/test", "x"))
			.isEqualTo("jdbc:postgresql://127.0.0.1:5432/x");
		assertThat(JdbcUrls.withDatabase("jdbc:postgresql://127.0.0.1:5432/test?sslmode=disable&user=u", "x"))
			.isEqualTo("jdbc:postgresql://127.0.0.1:5432/x?sslmode=disable&user=u");
		assertThat(JdbcUrls.withDatabase("jdbc:postgresql://h1:5432,[::1]:5433/test?targetServerType=primary", "x"))
			.isEqualTo("jdbc:postgresql://h1:5432,[::1]:5433/x?targetServerType=primary");
		assertThat(JdbcUrls.withDatabase("jdbc:postgresql://localhost", "x"))
			.isEqualTo("jdbc:postgresql://localhost/x");
		assertThat(JdbcUrls.withDatabase("jdbc:postgresql://localhost/?ssl=false", "x"))
			.isEqualTo("jdbc:postgresql://localhost/x?ssl=false");
		assertThat(JdbcUrls.withDatabase("jdbc:postgresql:test?ssl=false", "x"))
			.isEqualTo("jdbc:postgresql:x?ssl=false");
		assertThatIllegalArgumentException().isThrownBy(() -> JdbcUrls.withDatabase("jdbc:mysql://h/db", "x"));
	}

	@Test
	void setsOrReplacesAParameter() {
		assertThat(JdbcUrls.withParameter("jdbc:postgresql://h/db", "currentSchema", "s"))
			.isEqualTo("jdbc:postgresql://h/db?currentSchema=s");
		assertThat(JdbcUrls.withParameter("jdbc:postgresql://h/db?sslmode=disable&currentSchema=old&a=1",
				"currentSchema", "s"))
			.isEqualTo("jdbc:postgresql://h/db?sslmode=disable&a=1&currentSchema=s");
	}

	@Test
	void redactsPasswords() {
		assertThat(JdbcUrls.redact("jdbc:postgresql://h/db?user=u&password=secret&ssl=true"))
			.isEqualTo("jdbc:postgresql://h/db?user=u&password=***&ssl=true");
	}

}
