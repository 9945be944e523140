package io.ductor.idempotency.web.internal;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpHeaders;

import io.ductor.idempotency.StoredResponse;

/**
 * What of a handler's response is stored (status, body and the headers that describe the
 * content: {@value IdempotencyFilter#STORED_HEADERS_DOC}, as far as the handler's
 * dispatch wrote them), and how a stored response is replayed.
 */
public final class StoredResponses {

	/**
	 * The headers that make a replay the same answer: what describes its content (a
	 * partial one's range too), where it points, and whether a cache may keep it.
	 */
	private static final List<String> STORED_HEADERS = List.of(HttpHeaders.CONTENT_LANGUAGE,
			HttpHeaders.CONTENT_ENCODING, HttpHeaders.CONTENT_DISPOSITION, HttpHeaders.CONTENT_LOCATION,
			HttpHeaders.CONTENT_RANGE, HttpHeaders.LOCATION, HttpHeaders.ETAG, HttpHeaders.LAST_MODIFIED,
			HttpHeaders.CACHE_CONTROL, HttpHeaders.EXPIRES);

	private StoredResponses() {
	}

	/**
	 * @return what to store of a captured response
	 */
	static StoredResponse stored(ResponseCapture captured) {
		Map<String, List<String>> headers = new LinkedHashMap<>();
		if (captured.getContentType() != null) {
			headers.put(HttpHeaders.CONTENT_TYPE, List.of(captured.getContentType()));
		}
		for (String name : STORED_HEADERS) {
			List<String> values = captured.handlerHeaders(name);
			if (!values.isEmpty()) {
				headers.put(name, values);
			}
		}
		return new StoredResponse(captured.getStatus(), headers, captured.body());
	}

	/**
	 * Answers with a stored response, marked with
	 * {@value IdempotencyFilter#REPLAYED_HEADER}.
	 */
	static void replay(StoredResponse stored, HttpServletResponse response) throws IOException {
		response.setStatus(stored.status());
		// set, as the handler's own values replaced what a filter before it had set
		stored.headers().forEach((name, values) -> {
			for (int i = 0; i < values.size(); i++) {
				if (i == 0) {
					response.setHeader(name, values.get(i));
				}
				else {
					response.addHeader(name, values.get(i));
				}
			}
		});
		response.setHeader(IdempotencyFilter.REPLAYED_HEADER, "true");
		response.setContentLength(stored.body().length);
		response.getOutputStream().write(stored.body());
	}

}
