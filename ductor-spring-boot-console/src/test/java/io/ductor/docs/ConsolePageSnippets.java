package io.ductor.docs;

import org.springframework.context.annotation.Bean;
import org.springframework.security.config.Customizer;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.web.SecurityFilterChain;

/**
 * The Java block of {@code docs/console.md}, compiled against Spring Security.
 */
class ConsolePageSnippets {

	// tag::console-security[]
	@Bean
	SecurityFilterChain security(HttpSecurity http) throws Exception {
		return http
			.authorizeHttpRequests((requests) -> requests.requestMatchers("/ductor/**", "/actuator/ductor/**")
				.hasAnyRole("DUCTOR_VIEWER", "DUCTOR_OPERATOR")
				.anyRequest()
				.authenticated())
			.formLogin(Customizer.withDefaults())
			.build();
	}
	// end::console-security[]

}
