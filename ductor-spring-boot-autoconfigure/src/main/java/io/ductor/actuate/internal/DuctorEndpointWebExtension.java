package io.ductor.actuate.internal;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

import io.ductor.actuate.OperatorAccess;
import io.ductor.effect.EffectIntentStateException;

/**
 * The {@code ductor} endpoint's writes over HTTP: an action the intent's state refuses
 * (it is in another status, or it is an occurrence of an alarm that already has a pending
 * one) answers {@code 409 Conflict} and an unknown action or resolution
 * {@code 400 Bad Request}, each with the reason as {@code message}; nothing was changed.
 * Without it both were server errors. Pausing or resuming an alarm that does not exist
 * answers {@code 404 Not Found}. A caller the {@link OperatorAccess} refuses gets
 * {@code 403 Forbidden} for every write.
 */
@EndpointWebExtension(endpoint = DuctorEndpoint.class)
public class DuctorEndpointWebExtension {

	private static final Log logger = LogFactory.getLog(DuctorEndpointWebExtension.class);

	private static final int STATUS_CONFLICT = 409;

	private static final int STATUS_FORBIDDEN = 403;

	private static final int STATUS_NOT_FOUND = 404;

	private final DuctorEndpoint endpoint;

	private final @Nullable OperatorAccess access;

	/**
	 * @param endpoint the endpoint
	 * @param access who may write, or {@code null} for every caller
	 */
	public DuctorEndpointWebExtension(DuctorEndpoint endpoint, @Nullable OperatorAccess access) {
		this.endpoint = endpoint;
		this.access = access;
	}

	public WebEndpointResponse<Object> act(long id, String action, @Nullable String resolution) {
		return act(id, action, resolution, null, SecurityContext.NONE);
	}

	@WriteOperation
	public WebEndpointResponse<Object> act(@Selector long id, String action, @Nullable String resolution,
			@Nullable String reason, SecurityContext caller) {
		if (!mayWrite(caller)) {
			return forbidden(caller);
		}
		try {
			return new WebEndpointResponse<>(this.endpoint.act(id, action, resolution, reason, caller));
		}
		catch (EffectIntentStateException ex) {
			// the action and resolution were valid words, so they are safe to log
			logger.info("ductor endpoint: " + action.toLowerCase(Locale.ROOT) + " on intent " + id + " refused: "
					+ ex.getMessage());
			return refusal(STATUS_CONFLICT, "Conflict", ex.getMessage());
		}
		catch (IllegalArgumentException ex) {
			return refusal(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", ex.getMessage());
		}
	}

	@WriteOperation
	public WebEndpointResponse<Object> retryAll(String effect, String status, @Nullable String action,
			@Nullable String resolution, @Nullable String reason, SecurityContext caller) {
		if (!mayWrite(caller)) {
			return forbidden(caller);
		}
		try {
			return new WebEndpointResponse<>(
					this.endpoint.retryAll(effect, status, action, resolution, reason, caller));
		}
		catch (IllegalArgumentException ex) {
			return refusal(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", ex.getMessage());
		}
	}

	/**
	 * Pauses or resumes a recurring alarm: {@code 404 Not Found} when there is no
	 * recurring alarm of that name.
	 */
	@WriteOperation
	public WebEndpointResponse<Object> alarm(@Selector String kind, @Selector String action, String name,
			@Nullable String reason, SecurityContext caller) {
		if (!mayWrite(caller)) {
			return forbidden(caller);
		}
		try {
			Map<String, Object> alarm = this.endpoint.alarm(kind, action, name, reason, caller);
			if (alarm == null) {
				return refusal(STATUS_NOT_FOUND, "Not Found", "No recurring alarm is named '" + name + "'");
			}
			return new WebEndpointResponse<>(alarm);
		}
		catch (InvalidEndpointRequestException ex) {
			return refusal(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", ex.getReason());
		}
		catch (IllegalArgumentException ex) {
			return refusal(WebEndpointResponse.STATUS_BAD_REQUEST, "Bad Request", ex.getMessage());
		}
	}

	private boolean mayWrite(SecurityContext caller) {
		return this.access == null || this.access.mayWrite(caller);
	}

	private static WebEndpointResponse<Object> forbidden(SecurityContext caller) {
		String who = (caller.getPrincipal() != null) ? caller.getPrincipal().getName() : "anonymous";
		logger.info("ductor endpoint: write by " + who + " refused: not an operator");
		return refusal(STATUS_FORBIDDEN, "Forbidden", "changing intents needs the operator role");
	}

	private static WebEndpointResponse<Object> refusal(int status, String error, String message) {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("status", status);
		body.put("error", error);
		body.put("message", message);
		return new WebEndpointResponse<>(body, status);
	}

}
