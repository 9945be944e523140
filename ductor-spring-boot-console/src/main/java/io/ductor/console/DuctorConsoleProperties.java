package io.ductor.console;

import java.util.List;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The operator console ({@code ductor.console.*}).
 *
 * @param enabled Whether the application serves the operator console
 * @param path Path the console is served under
 * @param operatorRole Role (without {@code ROLE_}) a caller needs to change intents when
 * Spring Security is present
 * @param hiddenFields Names of argument fields whose values the console and the
 * {@code ductor} endpoint never show, at any depth of an intent's arguments (e.g.
 * {@code cardNumber})
 */
@ConfigurationProperties("ductor.console")
public record DuctorConsoleProperties(@DefaultValue("false") boolean enabled, @DefaultValue("/ductor") String path,
		@DefaultValue("DUCTOR_OPERATOR") String operatorRole, @DefaultValue List<String> hiddenFields) {

	public DuctorConsoleProperties {
		if (path == null || !path.startsWith("/") || path.length() < 2 || path.endsWith("/")
				|| !path.matches("[A-Za-z0-9/_.-]+")) {
			throw new IllegalArgumentException("ductor.console.path must start with '/', not end with '/', and hold "
					+ "only letters, digits, '/', '_', '.' and '-', but was '" + path + "'");
		}
		if (operatorRole == null || operatorRole.isBlank() || operatorRole.startsWith("ROLE_")) {
			throw new IllegalArgumentException(
					"ductor.console.operator-role must be a role name without the ROLE_ prefix but was '" + operatorRole
							+ "'");
		}
		hiddenFields = (hiddenFields != null) ? List.copyOf(hiddenFields) : List.of();
	}

}
