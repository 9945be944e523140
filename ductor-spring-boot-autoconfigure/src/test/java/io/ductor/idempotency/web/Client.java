package io.ductor.idempotency.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import org.springframework.context.ConfigurableApplicationContext;

/** A real HTTP client of one application instance. */
final class Client {

	private static final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final String base;

	Client(ConfigurableApplicationContext app) {
		this.base = "http://localhost:" + app.getEnvironment().getProperty("local.server.port");
	}

	/**
	 * @param method the method
	 * @param path the path
	 * @param key the idempotency key, or {@code null} for none
	 * @param body a JSON body, or {@code null} for none
	 * @param headers more headers, as name-value pairs
	 */
	HttpResponse<String> send(String method, String path, String key, String body, String... headers) throws Exception {
		return http.send(request(method, path, key, body, headers), HttpResponse.BodyHandlers.ofString());
	}

	HttpResponse<byte[]> sendForBytes(String method, String path, String key, String body, String... headers)
			throws Exception {
		return http.send(request(method, path, key, body, headers), HttpResponse.BodyHandlers.ofByteArray());
	}

	CompletableFuture<HttpResponse<String>> sendAsync(String method, String path, String key, String body,
			String... headers) {
		return http.sendAsync(request(method, path, key, body, headers), HttpResponse.BodyHandlers.ofString());
	}

	HttpResponse<String> post(String path, String key, String... headers) throws Exception {
		return send("POST", path, key, "{}", headers);
	}

	CompletableFuture<HttpResponse<String>> postAsync(String path, String key, String... headers) {
		return sendAsync("POST", path, key, "{}", headers);
	}

	private HttpRequest request(String method, String path, String key, String body, String... headers) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.base + path))
			.timeout(Duration.ofSeconds(120))
			.method(method,
					(body != null) ? HttpRequest.BodyPublishers.ofString(body) : HttpRequest.BodyPublishers.noBody());
		if (body != null) {
			request.header("Content-Type", "application/json");
		}
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		if (headers.length > 0) {
			request.headers(headers);
		}
		return request.build();
	}

}
