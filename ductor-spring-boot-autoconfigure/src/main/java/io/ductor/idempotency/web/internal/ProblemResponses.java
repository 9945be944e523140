package io.ductor.idempotency.web.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;

import io.ductor.json.internal.JsonCodec;

/**
 * Writes the filter's own answers as RFC 9457 problem details
 * ({@code application/problem+json}).
 */
public final class ProblemResponses {

	private final JsonCodec json;

	ProblemResponses(JsonCodec json) {
		this.json = json;
	}

	void write(HttpServletRequest request, HttpServletResponse response, HttpStatus status, String detail)
			throws IOException {
		Map<String, Object> problem = new LinkedHashMap<>();
		problem.put("type", "about:blank");
		problem.put("title", status.getReasonPhrase());
		problem.put("status", status.value());
		problem.put("detail", detail);
		problem.put("instance", request.getRequestURI());
		byte[] body = this.json.write(problem, "problem detail").getBytes(StandardCharsets.UTF_8);
		response.setStatus(status.value());
		response.setContentType(MediaType.APPLICATION_PROBLEM_JSON_VALUE);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

}
