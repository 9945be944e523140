package io.ductor.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** The sample shop over real HTTP, as a client sees it. */
final class ShopClient {

	private static final JsonMapper JSON = JsonMapper.builder().build();

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	private final String base;

	ShopClient(int port) {
		this.base = "http://localhost:" + port;
	}

	static String order(String customer, String sku, int quantity) {
		return "{\"customer\": \"" + customer + "\", \"sku\": \"" + sku + "\", \"quantity\": " + quantity + "}";
	}

	HttpResponse<String> placeOrder(String idempotencyKey, String body) {
		return placeOrder(idempotencyKey, body, null);
	}

	/**
	 * Place an order as part of the caller's trace, given as a W3C {@code traceparent}.
	 */
	HttpResponse<String> placeOrder(String idempotencyKey, String body, String traceparent) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(this.base + "/orders"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (idempotencyKey != null) {
			request.header("Idempotency-Key", idempotencyKey);
		}
		if (traceparent != null) {
			request.header("traceparent", traceparent);
		}
		return send(request.build());
	}

	HttpResponse<String> get(String path) {
		return send(HttpRequest.newBuilder(URI.create(this.base + path)).GET().build());
	}

	HttpResponse<String> post(String path, String json) {
		return send(HttpRequest.newBuilder(URI.create(this.base + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.build());
	}

	JsonNode order(String id) {
		HttpResponse<String> response = get("/orders/" + id);
		if (response.statusCode() != 200) {
			throw new IllegalStateException("GET /orders/" + id + " answered " + response.statusCode());
		}
		return json(response);
	}

	static JsonNode json(HttpResponse<String> response) {
		return JSON.readTree(response.body());
	}

	private HttpResponse<String> send(HttpRequest request) {
		try {
			return this.http.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(request.method() + " " + request.uri() + " failed: " + ex.getMessage(), ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
