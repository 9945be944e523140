package io.ductor.test;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * String surgery on PostgreSQL JDBC URLs
 * ({@code jdbc:postgresql://host[:port][,host2...]/db?k=v&...}).
 */
final class JdbcUrls {

	private static final String PREFIX = "jdbc:postgresql:";

	private static final Pattern PASSWORD_PARAMETER = Pattern.compile("(?i)([?&]password=)[^&]*");

	private JdbcUrls() {
	}

	/**
	 * Returns {@code url} pointing at {@code database}, keeping hosts and query
	 * parameters.
	 */
	static String withDatabase(String url, String database) {
		String base = base(url);
		if (!base.startsWith(PREFIX)) {
			throw new IllegalArgumentException("Not a PostgreSQL JDBC URL: " + redact(url));
		}
		String rest = base.substring(PREFIX.length());
		if (rest.startsWith("//")) {
			int slash = rest.indexOf('/', 2);
			String hosts = slash < 0 ? rest : rest.substring(0, slash);
			return PREFIX + hosts + "/" + database + query(url);
		}
		// the host-less form "jdbc:postgresql:database"
		return PREFIX + database + query(url);
	}

	/**
	 * Returns {@code url} with query parameter {@code key} set to {@code value},
	 * replacing an existing one.
	 */
	static String withParameter(String url, String key, String value) {
		List<String> parameters = new ArrayList<>();
		String query = query(url);
		if (!query.isEmpty()) {
			for (String parameter : query.substring(1).split("&")) {
				if (!parameter.isEmpty() && !parameter.equals(key) && !parameter.startsWith(key + "=")) {
					parameters.add(parameter);
				}
			}
		}
		parameters.add(key + "=" + value);
		return base(url) + "?" + String.join("&", parameters);
	}

	/**
	 * Returns {@code url} with the value of a {@code password} query parameter masked,
	 * for logging.
	 */
	static String redact(String url) {
		return PASSWORD_PARAMETER.matcher(url).replaceAll("$1***");
	}

	private static String base(String url) {
		int question = url.indexOf('?');
		return question < 0 ? url : url.substring(0, question);
	}

	private static String query(String url) {
		int question = url.indexOf('?');
		return question < 0 ? "" : url.substring(question);
	}

}
